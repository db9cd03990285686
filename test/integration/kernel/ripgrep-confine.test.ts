// ripgrep under the sandbox launcher: read access to the checked target alone, so whatever rg reaches outside
// it (through a symlink given, followed, or swapped in) is denied by the kernel, not by our checks.
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateExecutable } from "../../../server/kernel/read/executables.js";
import {
  confinedCommand,
  heldFdPath,
  probeRipgrepConfinement,
  type RipgrepConfinement,
} from "../../../server/kernel/search/ripgrep-confine.js";
import { closeQuietly, O_PATH } from "../../../server/sandbox/fd-walk.js";
import { agentGet, makeTempDir, startTestBridge, type TestBridge } from "../../helpers/bridge.js";

const run = promisify(execFile);

const rgPath = await locateExecutable("rg");
const confinement: RipgrepConfinement | undefined = rgPath ? await probeRipgrepConfinement(rgPath) : undefined;

describe.skipIf(!confinement)("ripgrep confined to the checked target (needs rg, the launcher and Landlock)", () => {
  let root: string;
  let outside: string;
  let targetFd: number;

  beforeAll(() => {
    root = makeTempDir("rg-confine");
    outside = makeTempDir("rg-confine-outside");
    fs.mkdirSync(path.join(root, "checked"));
    fs.writeFileSync(path.join(root, "checked", "in.txt"), "needle inside\n");
    fs.writeFileSync(path.join(outside, "out.txt"), "needle outside\n");
    fs.symlinkSync(outside, path.join(root, "checked", "link"));
    fs.symlinkSync(outside, path.join(root, "swapped"));
    targetFd = fs.openSync(path.join(root, "checked"), O_PATH | fs.constants.O_DIRECTORY);
  });
  afterAll(() => closeQuietly(targetFd));

  async function rg(args: string[]): Promise<{ stdout: string; stderr: string }> {
    const { command, args: full } = confinedCommand(confinement!, rgPath!, args, [heldFdPath(targetFd)]);
    try {
      return await run(command, full, { cwd: root });
    } catch (error) {
      const failed = error as { stdout: string; stderr: string };
      return { stdout: failed.stdout, stderr: failed.stderr };
    }
  }

  it("searches the checked target", async () => {
    expect((await rg(["needle", "checked"])).stdout).toContain("needle inside");
  });

  it.each([
    ["following a link inside the target", ["--follow", "needle", "checked"]],
    ["through a path that now leads outside", ["needle", "swapped"]],
    ["naming the outside file directly", ["needle", "outside-file"]],
  ])("is denied by the kernel %s", async (_what, args) => {
    fs.rmSync(path.join(root, "outside-file"), { force: true });
    fs.symlinkSync(path.join(outside, "out.txt"), path.join(root, "outside-file"));
    const { stdout, stderr } = await rg(args);
    expect(stdout).not.toContain("needle outside");
    if (args[0] !== "--follow") expect(stderr).toMatch(/Permission denied/);
  });
});

describe("the auto /g engine", () => {
  let t: TestBridge;
  beforeAll(async () => {
    t = await startTestBridge({ URLBRIDGE_GREP_ENGINE: "auto" });
    fs.writeFileSync(path.join(t.projectDir, "a.txt"), "needle\n");
  });
  afterAll(async () => t.close());

  it(`uses ripgrep only where it can be confined (${confinement ? "it can here" : "it cannot here"})`, async () => {
    const s = await t.session();
    const body = await agentGet(`${s.r}/g?raw=needle`);
    expect(body).toMatchObject({ ok: true, engine: confinement ? "rg" : "fallback", matchedLines: 1 });
  });
});
