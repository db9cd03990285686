// What /p tells an agent before its first command: how this project runs its tests (learned from marker
// files, never by running anything) and the guides written for contributors and agents (AGENTS.md...).
import { z } from "zod";
import { listDirectorySync, readFileInDirectory } from "../../sandbox/fd-ops.js";

/** Guides at the root an agent should read before changing things, in the order they are shown. */
export const GUIDE_FILES = ["AGENTS.md", "CLAUDE.md", "CONTRIBUTING.md", ".github/CONTRIBUTING.md"] as const;
const GUIDE_HEAD_BYTES = 600;
const PROBE_BYTES = 256 * 1024;

export const testCommandOutput = z.strictObject({
  command: z.string().describe("A command that runs this project's tests, for the terminal tool (/x)."),
  ecosystem: z.enum(["node", "python", "go", "rust", "java", "make"]),
  because: z.string().describe("The file that says so."),
  run: z
    .string()
    .optional()
    .describe(
      "When the project allows the terminal: the exact /x URL running it with run=@changed (runs again only once the project changed since its last run) and wait=20000.",
    ),
});

export const guideOutput = z.strictObject({
  path: z.string().describe('"/project/..." path of the guide.'),
  bytes: z.number().int(),
  head: z.string().describe(`Its first ${GUIDE_HEAD_BYTES} bytes or fewer, cut at a line end when one is near.`),
  truncated: z.boolean().describe("true when head is not the whole guide: read the rest with read."),
  read: z.string().describe("Exact URL reading the whole guide."),
});

export type TestCommand = z.infer<typeof testCommandOutput>;
export type Guide = z.infer<typeof guideOutput>;

type PackageManager = "pnpm" | "yarn" | "bun" | "npm";

async function text(rootFd: number, name: string): Promise<string | undefined> {
  return (await readFileInDirectory(rootFd, name, PROBE_BYTES))?.toString("utf8");
}

function hasPythonTests(names: Set<string>): boolean {
  if (names.has("conftest.py") || [...names].some((n) => /^test_.*\.py$|_test\.py$/.test(n))) return true;
  return names.has("tests") || names.has("test");
}

/**
 * Test commands in a fixed order (node, python, go, rust, java, make), at most one per ecosystem. `scripts`
 * are package.json's; `manager` the lockfile's package manager.
 */
export async function testCommandsOf(
  rootFd: number,
  scripts: Record<string, string> | undefined,
  manager: PackageManager | undefined,
  pythonCommand: string,
): Promise<TestCommand[]> {
  const names = new Set(listDirectorySync(rootFd));
  const out: TestCommand[] = [];
  if (scripts?.test !== undefined && !/no test specified/.test(scripts.test)) {
    const pm = manager ?? "npm";
    out.push({
      command: pm === "npm" ? "npm test" : `${pm} test`,
      ecosystem: "node",
      because: "package.json scripts.test",
    });
  }
  const pyproject = names.has("pyproject.toml") ? await text(rootFd, "pyproject.toml") : undefined;
  const setupCfg = names.has("setup.cfg") ? await text(rootFd, "setup.cfg") : undefined;
  const toxIni = names.has("tox.ini") ? await text(rootFd, "tox.ini") : undefined;
  const pytestSaid =
    (names.has("pytest.ini") && "pytest.ini") ||
    (pyproject && /\[tool\.pytest|\bpytest\b/.test(pyproject) && "pyproject.toml") ||
    (setupCfg && /\[tool:pytest\]/.test(setupCfg) && "setup.cfg") ||
    (toxIni && /\[pytest\]|\bpytest\b/.test(toxIni) && "tox.ini") ||
    (names.has("conftest.py") && "conftest.py");
  if (pytestSaid) {
    out.push({ command: `${pythonCommand} -m pytest -q`, ecosystem: "python", because: pytestSaid });
  } else if (
    (pyproject !== undefined || names.has("setup.py") || names.has("requirements.txt")) &&
    hasPythonTests(names)
  ) {
    out.push({
      command: `${pythonCommand} -m unittest discover -v`,
      ecosystem: "python",
      because: "Python project files and test files, no pytest configuration",
    });
  }
  if (names.has("go.mod")) out.push({ command: "go test ./...", ecosystem: "go", because: "go.mod" });
  if (names.has("Cargo.toml")) out.push({ command: "cargo test", ecosystem: "rust", because: "Cargo.toml" });
  if (names.has("pom.xml"))
    out.push({ command: names.has("mvnw") ? "./mvnw -q test" : "mvn -q test", ecosystem: "java", because: "pom.xml" });
  else if (names.has("build.gradle") || names.has("build.gradle.kts")) {
    out.push({
      command: names.has("gradlew") ? "./gradlew test" : "gradle test",
      ecosystem: "java",
      because: names.has("build.gradle") ? "build.gradle" : "build.gradle.kts",
    });
  }
  if (out.length === 0 && names.has("Makefile")) {
    const makefile = await text(rootFd, "Makefile");
    if (makefile && /^test\s*:/m.test(makefile))
      out.push({ command: "make test", ecosystem: "make", because: "Makefile target test" });
  }
  return out;
}

/** Opens guide files one component at a time (.github/CONTRIBUTING.md), never following a symlink out. */
export async function guidesOf(
  readGuide: (relative: string) => Promise<Buffer | undefined>,
  readUrl: (display: string) => string,
): Promise<Guide[]> {
  const out: Guide[] = [];
  for (const relative of GUIDE_FILES) {
    const bytes = await readGuide(relative);
    if (!bytes) continue;
    let head = bytes
      .subarray(0, GUIDE_HEAD_BYTES)
      .toString("utf8")
      .replace(/\uFFFD$/, "");
    const truncated = bytes.length > GUIDE_HEAD_BYTES;
    if (truncated) {
      const nl = head.lastIndexOf("\n");
      if (nl > GUIDE_HEAD_BYTES / 2) head = head.slice(0, nl + 1);
    }
    const display = `/project/${relative}`;
    out.push({ path: display, bytes: bytes.length, head, truncated, read: readUrl(display) });
  }
  return out;
}
