// project (/p): what the project is built with, learned without running anything: executables on PATH,
// marker files at the root, and package.json scripts.
import { z } from "zod";
import { DEFAULT_AGENT_FALLBACK, lstatInDirectory, readHeldFile } from "../../sandbox/fd-ops.js";
import { walkInsideRoot, type HeldPath } from "../../sandbox/fd-walk.js";
import { VIRTUAL_ROOT } from "../../sandbox/paths.js";
import fs from "node:fs";
import { buildChildEnv } from "../../sandbox/env-scrub.js";
import { agentIdentity } from "../../sandbox/identity.js";
import { locateExecutable, type LocateOptions } from "./executables.js";
import { guideOutput, guidesOf, testCommandOutput, testCommandsOf } from "./project-hints.js";
import { MAX_PROJECT_SCRIPTS, MAX_SCRIPT_COMMAND_CHARS, MAX_TEXT_FILE_BYTES } from "../limits.js";
import { defineTool, type ProjectScope } from "../tool/definition.js";

/**
 * How the project's terminal commands find programs (issue 27 item 5): the PATH their environment gets and, when
 * the bridge is root, the identity they run as (the root folder's owner, or the fallback for a root-owned one).
 * A program only root can reach (under /root, mode 0700 folders) is then not advertised.
 */
export function agentLookupOf(project: ProjectScope): LocateOptions {
  const searchPath = buildChildEnv().env.PATH;
  let owner: fs.Stats;
  try {
    owner = fs.statSync(project.root);
  } catch {
    return { searchPath };
  }
  return {
    searchPath,
    identity: agentIdentity({ uid: owner.uid, gid: owner.gid }, project.agentFallback ?? DEFAULT_AGENT_FALLBACK),
  };
}

/** Executables worth knowing about before running a command, looked up on PATH (never executed). */
export const KNOWN_EXECUTABLES = [
  "node",
  "npm",
  "npx",
  "pnpm",
  "yarn",
  "bun",
  "deno",
  "tsc",
  "tsx",
  "python3",
  "python",
  "pip",
  "pip3",
  "uv",
  "poetry",
  "pytest",
  "go",
  "cargo",
  "rustc",
  "java",
  "javac",
  "mvn",
  "gradle",
  "dotnet",
  "ruby",
  "bundle",
  "php",
  "composer",
  "make",
  "cmake",
  "gcc",
  "g++",
  "clang",
  "git",
  "rg",
  "docker",
  "kubectl",
  "curl",
  "jq",
  "sqlite3",
] as const;

/** Files and folders at the root that say what kind of project this is. */
export const MARKER_FILES = [
  "package.json",
  "package-lock.json",
  "pnpm-lock.yaml",
  "pnpm-workspace.yaml",
  "yarn.lock",
  "bun.lock",
  "bun.lockb",
  "tsconfig.json",
  "jsconfig.json",
  "deno.json",
  "deno.jsonc",
  ".nvmrc",
  ".node-version",
  "vite.config.ts",
  "vite.config.js",
  "next.config.js",
  "next.config.mjs",
  "vitest.config.ts",
  "jest.config.js",
  "eslint.config.js",
  "eslint.config.mjs",
  ".eslintrc.json",
  ".prettierrc",
  "biome.json",
  "pyproject.toml",
  "requirements.txt",
  "setup.py",
  "setup.cfg",
  "Pipfile",
  "poetry.lock",
  "uv.lock",
  ".python-version",
  "Cargo.toml",
  "Cargo.lock",
  "go.mod",
  "go.sum",
  "pom.xml",
  "build.gradle",
  "build.gradle.kts",
  "settings.gradle",
  "Gemfile",
  "composer.json",
  "CMakeLists.txt",
  "Makefile",
  "justfile",
  "Dockerfile",
  "compose.yaml",
  "compose.yml",
  "docker-compose.yml",
  "docker-compose.yaml",
  ".dockerignore",
  ".git",
  ".gitignore",
  ".github",
  ".gitlab-ci.yml",
  ".editorconfig",
  ".env",
  ".env.example",
  ".tool-versions",
  "README.md",
  "LICENSE",
  "AGENTS.md",
  "CONTRIBUTING.md",
  "pytest.ini",
  "tox.ini",
  "conftest.py",
  "mvnw",
  "gradlew",
] as const;

const LOCKFILE_MANAGERS: Array<[(typeof MARKER_FILES)[number], NonNullable<ProjectOutput["packageManager"]>]> = [
  ["pnpm-lock.yaml", "pnpm"],
  ["yarn.lock", "yarn"],
  ["bun.lock", "bun"],
  ["bun.lockb", "bun"],
  ["package-lock.json", "npm"],
];

const packageJsonSchema = z.looseObject({
  name: z.string().optional(),
  version: z.string().optional(),
  type: z.string().optional(),
  packageManager: z.string().optional(),
  scripts: z.record(z.string(), z.unknown()).optional(),
  workspaces: z.unknown().optional(),
  engines: z.record(z.string(), z.unknown()).optional(),
});

const marker = z.strictObject({
  name: z.enum(MARKER_FILES).describe("A marker file or folder found at the project root."),
  kind: z
    .enum(["file", "dir"])
    .describe("dir for a directory; anything else, a symlink included (never followed), is file."),
});

/** package.json, summarised; or why it could not be. */
const packageJsonSummary = z.union([
  z.strictObject({
    name: z.string().optional(),
    version: z.string().optional(),
    type: z.string().optional().describe('"module" or "commonjs", as written.'),
    packageManager: z.string().optional().describe('The packageManager field as written, e.g. "pnpm@9.1.0".'),
    engines: z.record(z.string(), z.unknown()).optional(),
    workspaces: z.unknown().optional(),
    scripts: z
      .record(z.string(), z.string())
      .describe(
        `Script name to command (at most ${MAX_PROJECT_SCRIPTS}, each cut to ${MAX_SCRIPT_COMMAND_CHARS} characters with …); run one with the terminal tool (/x).`,
      ),
    scriptsTruncated: z
      .number()
      .int()
      .optional()
      .describe(
        `Present when package.json has more than ${MAX_PROJECT_SCRIPTS} scripts: how many it has (a count, not a flag).`,
      ),
  }),
  z.strictObject({
    error: z.string().describe("Why package.json could not be summarised, and how to look at it instead."),
  }),
]);

/** What /p answers. */
export const projectOutput = z.strictObject({
  ok: z.literal(true),
  root: z.literal(VIRTUAL_ROOT).describe("The project root as every path shows it."),
  executables: z
    .record(z.string(), z.string())
    .describe("Known executables found on the bridge's PATH: name to absolute path. None was run."),
  missing: z.array(z.enum(KNOWN_EXECUTABLES)).describe("Known executables not found on PATH."),
  markers: z.array(marker).describe("Marker files and folders present at the root, in a fixed order."),
  packageJson: packageJsonSummary.optional().describe("Present when the root has a package.json."),
  packageManager: z
    .enum(["pnpm", "yarn", "bun", "npm"])
    .optional()
    .describe("The package manager the root's lockfile belongs to, when there is one."),
  testCommands: z
    .array(testCommandOutput)
    .describe(
      "How this project runs its tests, from its files (node, python, go, rust, java; make when none of those); none was run.",
    ),
  guides: z
    .array(guideOutput)
    .describe(
      "AGENTS.md, CLAUDE.md and CONTRIBUTING.md at the root (and .github/), with their first lines: read them before changing things.",
    ),
  notice: z.string().describe("Says where executables were looked up."),
});

type Marker = z.infer<typeof marker>;
type PackageJsonSummary = z.infer<typeof packageJsonSummary>;
export type ProjectOutput = z.infer<typeof projectOutput>;

/** A guide's bytes through the containment walk (a symlink leading out, or anything but a small file: skipped). */
async function readGuide(root: string, relative: string): Promise<Buffer | undefined> {
  let held: HeldPath;
  try {
    held = walkInsideRoot(root, relative);
  } catch {
    return undefined;
  }
  try {
    if (!held.exists || !held.stats!.isFile() || held.stats!.size > MAX_TEXT_FILE_BYTES) return undefined;
    return await readHeldFile(held.fd!, held.stats!.size);
  } catch {
    return undefined;
  } finally {
    held.close();
  }
}

/** lstat inside the held root: a marker that is a symlink is reported as present, never followed. */
function presentMarkers(rootFd: number): Marker[] {
  const found: Marker[] = [];
  for (const name of MARKER_FILES) {
    const info = lstatInDirectory(rootFd, name);
    if (info) found.push({ name, kind: info.isDirectory() ? "dir" : "file" });
  }
  return found;
}

/**
 * package.json as the containment walk holds it: a symlink inside the project is followed, one leading out
 * is refused with symlink_escape (thrown: /p answers that error, as /r does for the same path).
 */
async function readPackageJson(target: HeldPath): Promise<PackageJsonSummary | undefined> {
  if (!target.exists) return undefined;
  const info = target.stats!;
  if (!info.isFile()) return { error: "package.json is not a regular file. Look at it with /t?path=package.json." };
  if (info.size > MAX_TEXT_FILE_BYTES)
    return {
      error: `package.json is ${info.size} bytes, too large to parse here. Read parts of it with /r?path=package.json.`,
    };
  let text: string;
  try {
    text = (await readHeldFile(target.fd!, info.size)).toString("utf8");
  } catch {
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    return { error: `package.json is not valid JSON: ${(error as Error).message}. Read it with /r?path=package.json.` };
  }
  const result = packageJsonSchema.safeParse(parsed);
  if (!result.success)
    return { error: "package.json is not an object with the usual fields. Read it with /r?path=package.json." };
  const pkg = result.data;
  const entries = Object.entries(pkg.scripts ?? {}).filter((e): e is [string, string] => typeof e[1] === "string");
  const scripts = Object.fromEntries(
    entries
      .slice(0, MAX_PROJECT_SCRIPTS)
      .map(([name, command]) => [
        name,
        command.length > MAX_SCRIPT_COMMAND_CHARS ? `${command.slice(0, MAX_SCRIPT_COMMAND_CHARS)}…` : command,
      ]),
  );
  return {
    ...(pkg.name !== undefined ? { name: pkg.name } : {}),
    ...(pkg.version !== undefined ? { version: pkg.version } : {}),
    ...(pkg.type !== undefined ? { type: pkg.type } : {}),
    ...(pkg.packageManager !== undefined ? { packageManager: pkg.packageManager } : {}),
    ...(pkg.engines !== undefined ? { engines: pkg.engines } : {}),
    ...(pkg.workspaces !== undefined ? { workspaces: pkg.workspaces } : {}),
    scripts,
    ...(entries.length > MAX_PROJECT_SCRIPTS ? { scriptsTruncated: entries.length } : {}),
  };
}

export const projectTool = defineTool({
  id: "project",
  route: "p",
  longRoutes: ["toolchain"],
  capability: "read",
  description:
    "Executables on PATH, marker files at the project root, package.json scripts, how to run the tests and the contributor/agent guides, without running anything.",
  example: "/p",
  schema: z.object({}),
  output: projectOutput,
  url: {},
  async execute(_args, ctx) {
    const lookup = agentLookupOf(ctx.project);
    const pkg = walkInsideRoot(ctx.project.root, "package.json");
    let markers: Marker[];
    let packageJson: PackageJsonSummary | undefined;
    let located: Array<readonly [string, string | undefined]>;
    let testCommands: ProjectOutput["testCommands"];
    let lockfileManager: ProjectOutput["packageManager"];
    let executables: Record<string, string>;
    try {
      markers = presentMarkers(pkg.rootFd);
      [located, packageJson] = await Promise.all([
        Promise.all(KNOWN_EXECUTABLES.map(async (name) => [name, await locateExecutable(name, lookup)] as const)),
        readPackageJson(pkg),
      ]);
      executables = Object.fromEntries(located.filter((e): e is readonly [string, string] => e[1] !== undefined));
      const markerNames = new Set(markers.map((m) => m.name));
      lockfileManager = LOCKFILE_MANAGERS.find(([file]) => markerNames.has(file))?.[1];
      const scripts = packageJson && "scripts" in packageJson ? packageJson.scripts : undefined;
      testCommands = await testCommandsOf(
        pkg.rootFd,
        scripts,
        lockfileManager,
        executables.python3 || !executables.python ? "python3" : "python",
      );
    } finally {
      pkg.close();
    }
    const guides = await guidesOf(
      (relative) => readGuide(ctx.project.root, relative),
      (display) => ctx.urls.to("r", "r", [["path", display]]),
    );
    return {
      ok: true,
      root: VIRTUAL_ROOT,
      executables,
      missing: KNOWN_EXECUTABLES.filter((name) => executables[name] === undefined),
      markers,
      ...(packageJson ? { packageJson } : {}),
      ...(lockfileManager ? { packageManager: lockfileManager } : {}),
      testCommands: ctx.project.permissions.terminal
        ? testCommands.map((t) => ({
            ...t,
            run: ctx.urls.to(
              "m",
              "x",
              [
                ["run", "@changed"],
                ["wait", 20000],
              ],
              t.command,
            ),
          }))
        : testCommands,
      guides,
      notice: "Executables are looked up on the bridge's PATH, which terminal (/x) commands use; none was run.",
    };
  },
});
