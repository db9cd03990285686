// Containment against the mutation fast paths (the s24 safety review): a write or edit records its success ahead of
// the rename and renames through /proc/self/fd/<dirFd>/<name> later (durable-write.ts), so the folder is swapped for
// a symlink to an outside folder exactly in that window, held open by the test-only URLBRIDGE_TEST_RENAME_DELAY_MS
// hook: the rename must land in the folder that was walked, never outside. Then the bridge is SIGKILLed in the same
// window and the folder swapped before it restarts: recovery walks the recorded path again, and must neither read
// the outside file (made to hold exactly the content the write would have written) nor remove the stale-looking temp
// file planted beside it (removeStaleTempFilesIn). Last, a multi-file apply_patch killed mid-commit and its folder
// swapped before the restart: the rollback walks the recorded paths with symlinks refused and writes no pre-image
// through the link.
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PATCH_WRITE_DELAY_ENV, RENAME_DELAY_ENV } from "../../../server/mutation/journal/test-hooks.js";
import { TEMP_SUFFIX } from "../../../server/sandbox/fd-ops.js";
import { STATE_FILE_NAME } from "../../../server/store/database.js";
import {
  agentGet,
  giveToAgent,
  makeTempDir,
  startTestBridge,
  type AgentSession,
  type TestBridge,
  makeProjectDir,
  writeAsAgent,
  mkdirAsAgent,
} from "../../helpers/bridge.js";
import { controlApi, killServerProcesses, startServerProcess } from "../../helpers/server-process.js";
import { url } from "../mutation/fixtures.js";

type Body = Record<string, unknown> & {
  ok: boolean;
  errorCode?: string;
  callId?: string;
  state?: string;
  poll?: string;
};

const WAIT_TRIES = 800;
/** A name removeStaleTempFilesIn takes for one of its own temp files beside target.txt. */
const STALE_TEMP = `.target.txt.0123456789ab${TEMP_SUFFIX}`;

/** An outside folder as a hostile checkout would leave it: the target's name, and a temp file of the write's shape. */
function outsideTwin(content: string): { dir: string; listing: () => Record<string, string> } {
  const dir = makeTempDir("race-outside");
  writeAsAgent(path.join(dir, "target.txt"), content);
  writeAsAgent(path.join(dir, "e.txt"), "value 1\n");
  writeAsAgent(path.join(dir, STALE_TEMP), "not the bridge's\n");
  const listing = () =>
    Object.fromEntries(
      fs
        .readdirSync(dir)
        .sort()
        .map((n) => [n, fs.readFileSync(path.join(dir, n), "utf8")]),
    );
  return { dir, listing };
}

/** Moves `sub` aside (still inside the root) and puts a symlink to `target` in its place. */
function swapForSymlink(root: string, target: string): void {
  fs.renameSync(path.join(root, "sub"), path.join(root, "sub-moved"));
  fs.symlinkSync(target, path.join(root, "sub"));
}

const tempsIn = (dir: string) => fs.readdirSync(dir).filter((n) => n.endsWith(TEMP_SUFFIX));

function recordOf(stateDir: string, callId: string): { state: string; unconfirmed: number } | undefined {
  const db = new Database(path.join(stateDir, STATE_FILE_NAME), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT state, unconfirmed FROM intents WHERE call_id = ?").get(callId) as
      { state: string; unconfirmed: number } | undefined;
  } finally {
    db.close();
  }
}

describe("a folder swapped for a symlink between the walk and the held rename", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    process.env[RENAME_DELAY_ENV] = "1500";
    t = await startTestBridge();
    delete process.env[RENAME_DELAY_ENV];
    s = await t.session({ write: true });
  });
  afterAll(async () => t.close());

  it.each([
    [
      "a write of a new file",
      "target.txt",
      (m: string) =>
        url(
          m,
          "w",
          [
            ["path", "sub/target.txt"],
            ["wait", 0],
          ],
          "fresh\n",
        ),
      "fresh\n",
    ],
    [
      "an edit",
      "e.txt",
      (m: string) =>
        url(
          m,
          "e",
          [
            ["path", "sub/e.txt"],
            ["old", "value 1"],
            ["wait", 0],
          ],
          "value 2",
        ),
      "value 2\n",
    ],
  ])("renames %s inside the folder that was walked, never through the symlink", async (_name, file, call, after) => {
    const root = t.projectDir;
    fs.rmSync(path.join(root, "sub"), { recursive: true, force: true });
    fs.rmSync(path.join(root, "sub-moved"), { recursive: true, force: true });
    mkdirAsAgent(path.join(root, "sub"));
    writeAsAgent(path.join(root, "sub", "e.txt"), "value 1\n");
    giveToAgent(root);
    const outside = outsideTwin("outside\n");
    const before = outside.listing();

    const accepted = await agentGet<Body>(call(s.m!));
    expect(accepted).toMatchObject({ ok: true, state: "running" });
    // Its success recorded ahead and its temp file written in sub/: the rename is held now.
    for (let i = 0; i < WAIT_TRIES && tempsIn(path.join(root, "sub")).length === 0; i++) await sleep(5);
    expect(tempsIn(path.join(root, "sub"))).toHaveLength(1);
    swapForSymlink(root, outside.dir);

    let body = await agentGet<Body>(accepted.poll!);
    for (let i = 0; i < WAIT_TRIES && body.state === "running"; i++) body = await agentGet<Body>(body.poll!);
    expect(body).toMatchObject({ ok: true, state: "succeeded" });
    expect(outside.listing()).toEqual(before);
    expect(fs.readFileSync(path.join(root, "sub-moved", file), "utf8")).toBe(after);
    expect(tempsIn(path.join(root, "sub-moved"))).toEqual([]);
  });
});

describe("a folder swapped for a symlink while the bridge is down with a success recorded ahead of its rename", () => {
  afterEach(killServerProcesses);

  it(
    "recovers without reading the outside file or removing the temp file planted there",
    { timeout: 60_000 },
    async () => {
      const stateDir = makeTempDir("race-state");
      const root = makeProjectDir("race-project");
      mkdirAsAgent(path.join(root, "sub"));
      // The outside target already holds exactly what the write would have written: a recovery that read it would
      // confirm the success; one that cleaned beside it would delete the planted temp file.
      const outside = outsideTwin("fresh\n");
      const before = outside.listing();

      const first = await startServerProcess({ stateDir, env: { [RENAME_DELAY_ENV]: "60000" } });
      const project = await controlApi<{ id: string }>(first, "POST", "/api/projects", {
        name: "race",
        root,
        permissions: { write: true, terminal: false },
      });
      const session = await controlApi<{ initUrl: string }>(first, "POST", "/api/sessions", { projectId: project.id });
      const m = (await agentGet<{ bases: { m: string } }>(session.initUrl)).bases.m;
      const callUrl = url(
        m,
        "w",
        [
          ["path", "sub/target.txt"],
          ["wait", 0],
        ],
        "fresh\n",
      );
      const accepted = await agentGet<Body>(callUrl);
      expect(accepted).toMatchObject({ ok: true, state: "running" });
      for (
        let i = 0;
        i < WAIT_TRIES &&
        (recordOf(stateDir, accepted.callId!)?.state !== "succeeded" || tempsIn(path.join(root, "sub")).length === 0);
        i++
      )
        await sleep(20);
      expect(recordOf(stateDir, accepted.callId!)).toMatchObject({ state: "succeeded", unconfirmed: 1 });
      first.child.kill("SIGKILL");
      await first.exited;

      swapForSymlink(root, outside.dir);
      const second = await startServerProcess({ stateDir });
      const replayed = await agentGet<Body>(callUrl.replace(first.dataUrl, second.dataUrl));
      expect(replayed).toMatchObject({ ok: false, state: "failed", errorCode: "interrupted" });
      expect(outside.listing()).toEqual(before);
      // The walked folder (moved aside) still has the crashed write's temp file: nothing was renamed anywhere.
      expect(fs.existsSync(path.join(root, "sub-moved", "target.txt"))).toBe(false);
      second.child.kill("SIGTERM");
      await second.exited;
    },
  );
});

describe("a folder swapped for a symlink while the bridge is down mid-patch", () => {
  afterEach(killServerProcesses);

  it(
    "rolls back what it can reach by the recorded paths and writes no pre-image through the symlink",
    { timeout: 90_000 },
    async () => {
      const stateDir = makeTempDir("patch-race-state");
      const root = makeProjectDir("patch-race-project");
      const names = Array.from({ length: 20 }, (_, i) => `file${String(i).padStart(2, "0")}.txt`);
      writeAsAgent(path.join(root, "top.txt"), "top 1\n");
      mkdirAsAgent(path.join(root, "sub"));
      for (const name of names) writeAsAgent(path.join(root, "sub", name), `value 1 of ${name}\n`);
      const outside = makeTempDir("patch-race-outside");
      for (const name of names) writeAsAgent(path.join(outside, name), `outside ${name}\n`);
      writeAsAgent(path.join(outside, `.${names[0]}.0123456789ab${TEMP_SUFFIX}`), "not the bridge's\n");
      const outsideListing = () =>
        Object.fromEntries(
          fs
            .readdirSync(outside)
            .sort()
            .map((n) => [n, fs.readFileSync(path.join(outside, n), "utf8")]),
        );
      const before = outsideListing();

      const first = await startServerProcess({ stateDir, env: { [PATCH_WRITE_DELAY_ENV]: "100" } });
      const project = await controlApi<{ id: string }>(first, "POST", "/api/projects", {
        name: "patch-race",
        root,
        permissions: { write: true, terminal: false },
      });
      const session = await controlApi<{ initUrl: string }>(first, "POST", "/api/sessions", { projectId: project.id });
      const m = (await agentGet<{ bases: { m: string } }>(session.initUrl)).bases.m;
      const patch = [
        "*** Begin Patch",
        "*** Update File: top.txt",
        "-top 1",
        "+top 2",
        ...names.flatMap((name) => [`*** Update File: sub/${name}`, `-value 1 of ${name}`, `+value 2 of ${name}`]),
        "*** End Patch",
      ].join("\n");
      const applyUrl = url(m, "a", [["wait", 0]], patch);
      const accepted = await agentGet<Body>(applyUrl);
      expect(accepted).toMatchObject({ ok: true, agentAction: "poll" });
      const changed = () =>
        names.filter((name) => fs.readFileSync(path.join(root, "sub", name), "utf8").startsWith("value 2")).length;
      for (let i = 0; i < WAIT_TRIES && changed() < 3; i++) await sleep(20);
      first.child.kill("SIGKILL");
      await first.exited;
      const changedAtKill = changed();
      expect(changedAtKill).toBeGreaterThanOrEqual(3);
      expect(changedAtKill).toBeLessThan(names.length);

      swapForSymlink(root, outside);
      const second = await startServerProcess({ stateDir });
      const replayed = await agentGet<Body>(applyUrl.replace(first.dataUrl, second.dataUrl));
      // Not re-run, and not claimed rolled back: the agent is told recovery failed and to check the project.
      expect(replayed).toMatchObject({
        ok: false,
        state: "failed",
        errorCode: "interrupted",
        errorDetail: { recoveryFailed: true },
      });
      expect(outsideListing()).toEqual(before);
      // What the recorded paths still reach is restored; the folder moved aside keeps what the crash left.
      expect(fs.readFileSync(path.join(root, "top.txt"), "utf8")).toBe("top 1\n");
      const moved = names.filter((name) =>
        fs.readFileSync(path.join(root, "sub-moved", name), "utf8").startsWith("value 2"),
      ).length;
      expect(moved).toBe(changedAtKill);
      second.child.kill("SIGTERM");
      await second.exited;
    },
  );
});
