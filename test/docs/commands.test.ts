// Every command the README and docs/CONTROL_PLANE.md give, and every hint the CLI prints, is run or checked here,
// read from the files themselves so they cannot drift apart:
// - each shell block declares on its fence how it is tested (```bash test=run|serve|docker|ci); one without is a
//   failure, so a new block cannot go untested;
// - serve and run blocks are executed as written, in document order, in a temp install: a copy of the checkout
//   (node_modules linked), a fresh HOME, and a private network namespace, so the default ports 47433/47432 the
//   README names are this test's own. The hints the CLI prints on the way (Next:, Print it with:) and the one the
//   server logs are run too;
// - docker blocks and inline `docker compose` commands are checked against compose.yaml and the CLI's own parser
//   here, and run against `docker compose config` by test/e2e/readme-compose.test.ts;
// - ci blocks must be what .ci/run runs; inline `npm` and `urlbridge` commands must name real scripts and commands.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir } from "../helpers/bridge.js";
import {
  cliProblem,
  COMMAND_DOCS,
  commandsOf,
  dockerProblem,
  hintsIn,
  inlineCommands,
  REPO_ROOT,
  shellBlocks,
  type ShellBlock,
} from "./doc-commands.js";

const blocks = COMMAND_DOCS.flatMap((file) => shellBlocks(file));
const where = (b: ShellBlock) => `${b.file}:${b.line}`;
const ofMode = (mode: ShellBlock["mode"]) => blocks.filter((b) => b.mode === mode);
const packageScripts = Object.keys(
  (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> })
    .scripts,
);
const CI_RUN = fs.readFileSync(path.join(REPO_ROOT, ".ci/run"), "utf8");

/** `npm install-test` is `npm install` then `npm test`. */
const ranByCi = (command: string) =>
  CI_RUN.includes(command) || (["npm install", "npm test"].includes(command) && CI_RUN.includes("npm install-test"));

describe("documented commands (static)", () => {
  it("every shell block declares how it is tested", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    expect(blocks.filter((b) => !b.mode).map((b) => `${where(b)} test=${b.declared ?? "(none)"}`)).toEqual([]);
    expect(ofMode("serve")).toHaveLength(1);
  });

  it("ci blocks are what .ci/run runs", () => {
    const missing = ofMode("ci").flatMap((b) =>
      commandsOf(b.text)
        .filter((c) => !ranByCi(c))
        .map((c) => `${where(b)}: ${c}`),
    );
    expect(missing).toEqual([]);
  });

  it("docker blocks and inline docker commands name compose services and CLI commands that exist", () => {
    const docker = [
      ...ofMode("docker").flatMap((b) =>
        commandsOf(b.text)
          .filter((c) => c.startsWith("docker "))
          .map((c) => [where(b), c] as const),
      ),
      ...COMMAND_DOCS.flatMap((f) =>
        inlineCommands(f)
          .filter((c) => c.startsWith("docker "))
          .map((c) => [f, c] as const),
      ),
    ];
    expect(docker.length).toBeGreaterThan(8);
    expect(docker.map(([w, c]) => [w, c, dockerProblem(c)]).filter(([, , p]) => p)).toEqual([]);
  });

  it("inline urlbridge and npm commands name real commands and scripts", () => {
    const problems: string[] = [];
    for (const file of COMMAND_DOCS) {
      for (const c of inlineCommands(file)) {
        const cli = /^(?:npx )?urlbridge(?: (.*))?$/.exec(c);
        if (cli) {
          const p = cliProblem(cli[1] ?? "");
          if (p) problems.push(`${file}: ${c}: ${p}`);
          continue;
        }
        const npm = /^npm (?:run (\S+)|(start|test|install-test|install))/.exec(c);
        if (!npm) {
          if (c.startsWith("npm ")) problems.push(`${file}: ${c}: not an npm command this project has`);
          continue;
        }
        const script = npm[1] ?? npm[2]!;
        if (script !== "install" && script !== "install-test" && !packageScripts.includes(script))
          problems.push(`${file}: ${c}: no script "${script}"`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("rejects what the issue found: a host path inside docker compose exec, and a command the CLI does not have", () => {
    expect(dockerProblem("docker compose exec bridge urlbridge project add demo ~/code/demo --write")).toMatch(
      /expands on the host/,
    );
    expect(dockerProblem("docker compose exec bridge urlbridge project delete demo")).toMatch(/unknown command/);
    expect(dockerProblem("docker compose logs tunnle")).toMatch(/does not define/);
    expect(cliProblem("session create")).toMatch(/takes <project-name-or-id>/);
  });
});

// --- executed against a temp install --------------------------------------------------------------------------

const asRoot = process.getuid?.() === 0;
const canUnshare = asRoot && fs.existsSync("/usr/bin/unshare") && fs.existsSync("/usr/bin/nsenter");
/** The serve block builds the checkout copy first (tsc, vite, the launcher): minutes on a busy 2-core machine. */
const SERVE_TIMEOUT_MS = 10 * 60_000;
const POLL_MS = 500;
const COMMAND_TIMEOUT_MS = 120_000;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe.skipIf(!canUnshare)(
  "documented commands, run as written in a temp install (private network namespace)",
  () => {
    const root = makeTempDir("docs-install");
    // A root bridge's agents act as uid 1000 (file tools and terminal alike), which must reach folders in HOME.
    if (asRoot) fs.chmodSync(root, 0o755);
    const copy = path.join(root, "urlbridge");
    const home = path.join(root, "home");
    let holder: ChildProcess | undefined;
    let server: ChildProcess | undefined;
    let serverLog = "";
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      LANG: "C.UTF-8",
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
    };

    function inNamespace(script: string, detached = false): ChildProcess {
      return spawn("nsenter", [`--net=/proc/${holder!.pid}/ns/net`, "bash", "-euo", "pipefail", "-c", script], {
        cwd: copy,
        env,
        detached,
        stdio: ["ignore", "pipe", "pipe"],
      });
    }

    function run(script: string): Promise<Result> {
      return new Promise((resolve) => {
        const child = inNamespace(script);
        let stdout = "";
        let stderr = "";
        child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
        const timer = setTimeout(() => child.kill("SIGKILL"), COMMAND_TIMEOUT_MS);
        child.on("close", (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
      });
    }

    function copyCheckout(): void {
      const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
        cwd: REPO_ROOT,
        encoding: "utf8",
      })
        .split("\0")
        .filter(Boolean);
      for (const rel of files) {
        const from = path.join(REPO_ROOT, rel);
        if (!fs.existsSync(from) || rel.startsWith("node_modules/")) continue;
        fs.mkdirSync(path.dirname(path.join(copy, rel)), { recursive: true });
        fs.copyFileSync(from, path.join(copy, rel));
      }
      fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(copy, "node_modules"));
      fs.mkdirSync(home);
    }

    afterAll(() => {
      if (server?.pid && server.exitCode === null) process.kill(-server.pid, "SIGKILL");
      holder?.kill("SIGKILL");
    });

    it(
      "serve and run blocks, and the CLI's and server's hints, work as written",
      async () => {
        copyCheckout();
        holder = spawn("unshare", ["--net", "bash", "-c", "ip link set lo up && echo ready && exec sleep 1200"], {
          stdio: ["ignore", "pipe", "inherit"],
        });
        await new Promise<void>((resolve, reject) => {
          holder!.stdout!.once("data", () => resolve());
          holder!.once("exit", (code) => reject(new Error(`unshare exited ${code}`)));
        });

        const [serve] = ofMode("serve");
        server = inNamespace(serve!.text, true);
        server.stdout!.on("data", (d: Buffer) => (serverLog += d.toString()));
        server.stderr!.on("data", (d: Buffer) => (serverLog += d.toString()));
        const deadline = Date.now() + SERVE_TIMEOUT_MS;
        while (!/control plane on/.test(serverLog)) {
          if (server.exitCode !== null) throw new Error(`${where(serve!)} exited ${server.exitCode}:\n${serverLog}`);
          if (Date.now() > deadline)
            throw new Error(`${where(serve!)} did not serve within ${SERVE_TIMEOUT_MS} ms:\n${serverLog}`);
          await new Promise((r) => setTimeout(r, POLL_MS));
        }

        const hints: string[] = [];
        // The server's own hint: how to print the token it just generated.
        const logged = /print it with `([^`]+)`/.exec(serverLog)?.[1];
        expect(logged, serverLog).toBeDefined();
        hints.push(logged!);

        for (const block of ofMode("run")) {
          const result = await run(block.text);
          expect({ at: where(block), code: result.code, stderr: result.stderr }).toEqual({
            at: where(block),
            code: 0,
            stderr: "",
          });
          expect(result.stdout, where(block)).not.toMatch(/"ok":\s*false|"error":\s*\{|^null$/m);
          hints.push(...hintsIn(result.stdout));
        }

        expect(hints.some((h) => h.includes("session create notes"))).toBe(true);
        for (const hint of hints) {
          if (/<[^>]+>/.test(hint)) {
            expect(cliProblem(hint.replace(/^.*?urlbridge /, "")), hint).toBeUndefined();
            continue;
          }
          const result = await run(hint);
          expect({ hint, code: result.code, stderr: result.stderr }).toEqual({ hint, code: 0, stderr: "" });
        }
        const token = fs.readFileSync(path.join(home, ".local/state/urlbridge/operator-token"), "utf8").trim();
        expect((await run(logged!)).stdout.trim()).toBe(token);
      },
      SERVE_TIMEOUT_MS + 5 * 60_000,
    );
  },
);
