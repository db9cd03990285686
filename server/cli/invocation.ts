// How an operator types a `urlbridge` command on this machine, for every hint the CLI, the control API and
// the login page print, so each can be pasted as shown: in the appliance through `docker compose exec` (run
// beside compose.yaml); from a checkout through `npx urlbridge` (the checkout's own bin; outside it, the bin's
// absolute path, because `npx urlbridge` elsewhere would fetch a package of that name); `urlbridge` when it is
// on PATH. A state dir other than the default is named, since the command must find the same token.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defaultStateDir, type Config } from "../config.js";

const here = path.dirname(fileURLToPath(import.meta.url));
/** This package's root: server/cli/ in a checkout, dist/server/cli/ when built. */
export const CLI_PACKAGE_ROOT = [path.resolve(here, "..", ".."), path.resolve(here, "..", "..", "..")].find((p) =>
  fs.existsSync(path.join(p, "package.json")),
)!;

export interface InvocationContext {
  inAppliance: boolean;
  /** The package (checkout or install) this process runs from; default CLI_PACKAGE_ROOT. */
  packageRoot?: string;
  /** The operator's working directory, when known (the CLI's); the login page does not know it. */
  cwd: string | undefined;
  env: NodeJS.ProcessEnv;
}

/**
 * True when `urlbridge` on the operator's PATH is this package's bin (an `npm link` or a global install of it).
 * `npx urlbridge` runs us with a PATH of its own that has the bin (npm exec's temp bin folder, node_modules/.bin):
 * those folders are not the operator's, and a command run through npx is hinted through npx again.
 */
function onPath(packageRoot: string, env: NodeJS.ProcessEnv): boolean {
  if (env.npm_command === "exec") return false;
  const bin = path.join(packageRoot, "bin", "urlbridge.js");
  const npmOwn = (dir: string) =>
    dir.includes(`${path.sep}node_modules${path.sep}.bin`) || dir.includes(`${path.sep}_npx${path.sep}`);
  for (const dir of (env.PATH ?? "").split(path.delimiter).filter((d) => d && !npmOwn(d))) {
    try {
      if (fs.realpathSync(path.join(dir, "urlbridge")) === fs.realpathSync(bin)) return true;
    } catch {
      // Not there, or not ours.
    }
  }
  return false;
}

const inside = (dir: string, root: string) => dir === root || dir.startsWith(`${root}${path.sep}`);

/** The command line for `urlbridge <args>`, ready to paste. */
export function operatorCommand(args: string, config: Config, context: InvocationContext): string {
  if (context.inAppliance) return `docker compose exec bridge urlbridge ${args}`;
  const stateDir =
    config.stateDir === path.resolve(defaultStateDir(context.env)) || config.operatorToken
      ? ""
      : `URLBRIDGE_STATE_DIR=${config.stateDir} `;
  const packageRoot = context.packageRoot ?? CLI_PACKAGE_ROOT;
  if (onPath(packageRoot, context.env)) return `${stateDir}urlbridge ${args}`;
  const root = fs.realpathSync(packageRoot);
  const cwd = context.cwd === undefined ? undefined : fs.realpathSync(context.cwd);
  if (cwd === undefined || inside(cwd, root)) return `${stateDir}npx urlbridge ${args}`;
  return `${stateDir}node ${path.join(root, "bin", "urlbridge.js")} ${args}`;
}

/**
 * How this bridge is started, for "start the server first" hints. In the appliance plain `up -d` is right in both
 * modes: with the tunnel, and without it (deploy/compose.local-data-plane.yaml, named in .env, leaves it out).
 */
export function startCommand(context: Pick<InvocationContext, "inAppliance">): string {
  return context.inAppliance ? "docker compose up -d" : "npm start (in the checkout)";
}
