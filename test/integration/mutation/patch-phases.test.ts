// apply_patch's three commit phases (server/mutation/files/apply-patch/phases.ts): a real server SIGKILLed between
// staging and switch leaves the tree exactly as before and no temp file after its restart; a folder swapped for a
// symlink in that window is refused with nothing written outside; and a patch of N files in K folders makes N + K
// file fsyncs (counted by wrapping node:fs's fsync calls in this process), not 2N.
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PATCH_SWITCH_DELAY_ENV } from "../../../server/mutation/journal/test-hooks.js";
import { TEMP_SUFFIX } from "../../../server/sandbox/fd-ops.js";
import {
  agentGet,
  makeTempDir,
  startTestBridge,
  type AgentSession,
  type TestBridge,
  makeProjectDir,
} from "../../helpers/bridge.js";
import { controlApi as api, killServerProcesses, startServerProcess } from "../../helpers/server-process.js";
import { patchText, snapshotTree, url, writeFiles } from "./fixtures.js";

type Body = Record<string, unknown> & {
  ok: boolean;
  errorCode?: string;
  errorDetail?: Record<string, unknown>;
  callId?: string;
  state?: string;
};

const POLL_TRIES = 2000;
const POLL_MS = 5;

afterEach(killServerProcesses);

/** Relative paths of every temp file of ours under root. */
function tempFiles(root: string): string[] {
  return Object.keys(snapshotTree(root)).filter((p) => p.endsWith(TEMP_SUFFIX));
}

async function until(what: string, test: () => boolean): Promise<void> {
  for (let i = 0; i < POLL_TRIES; i++) {
    if (test()) return;
    await sleep(POLL_MS);
  }
  throw new Error(`timed out waiting until ${what}`);
}

describe("apply_patch killed between staging and switch", () => {
  it(
    "restarts to the exact tree before the patch, with no temp file left, and answers interrupted_rolled_back",
    { timeout: 60_000 },
    async () => {
      const stateDir = makeTempDir("phases-state");
      const root = makeProjectDir("phases-project");
      const files: Record<string, string> = {};
      for (let i = 0; i < 12; i++) files[`src/d${i % 3}/f${i}.txt`] = `header ${i}\nvalue = ${i}\n`;
      files["src/gone.txt"] = "deleted by the patch\n";
      files["src/from.txt"] = "moved\nby the patch\n";
      writeFiles(root, files);
      const before = snapshotTree(root);
      const updates = Array.from({ length: 12 }, (_, i) => [
        `*** Update File: src/d${i % 3}/f${i}.txt`,
        "@@",
        `-value = ${i}`,
        `+value = ${i * 7}`,
      ]).flat();
      const patch = patchText(
        ...updates,
        "*** Delete File: src/gone.txt",
        "*** Update File: src/from.txt",
        "*** Move to: src/d1/to.txt",
        "@@",
        "-moved",
        "+was moved",
        "*** Add File: fresh/deep/new.txt",
        "+new",
      );
      // 12 updates, the move's destination and the add: 14 temp files once staged.
      const staged = 14;

      const first = await startServerProcess({ stateDir, env: { [PATCH_SWITCH_DELAY_ENV]: "30000" } });
      const project = await api<{ id: string }>(first, "POST", "/api/projects", {
        name: "phases",
        root,
        permissions: { write: true, terminal: false },
      });
      const session = await api<{ initUrl: string }>(first, "POST", "/api/sessions", { projectId: project.id });
      const m = (await agentGet<{ bases: { m: string } }>(session.initUrl)).bases.m;
      const applyUrl = url(m, "a", [["wait", 0]], patch);
      const accepted = await agentGet<Body>(applyUrl);
      expect(accepted).toMatchObject({ ok: true, agentAction: "poll" });

      // Every temp file written (each is fsynced before the switch delay starts; that it is durable is not what is
      // shown here, only that a kill in this window leaves nothing behind).
      await until("every temp file is staged", () => tempFiles(root).length === staged);
      // The tree itself has not changed: only temp files and the new folders they sit in.
      const now = snapshotTree(root);
      for (const [p, entry] of Object.entries(before)) expect(now[p], p).toEqual(entry);
      expect(
        Object.keys(now)
          .filter((p) => !(p in before) && !p.endsWith(TEMP_SUFFIX))
          .sort(),
      ).toEqual(["fresh", "fresh/deep"]);
      first.child.kill("SIGKILL");
      await first.exited;

      const second = await startServerProcess({ stateDir });
      expect(tempFiles(root)).toEqual([]);
      expect(snapshotTree(root)).toEqual(before);
      const polled = await agentGet<Body>(
        url(m.replace(first.dataUrl, second.dataUrl), "j", [["call", accepted.callId!]]),
      );
      expect(polled).toMatchObject({
        ok: false,
        state: "failed",
        errorCode: "interrupted_rolled_back",
        tool: "apply_patch",
      });
      second.child.kill("SIGTERM");
      await second.exited;
    },
  );
});

describe("apply_patch with its folder swapped for a symlink between staging and switch", () => {
  let t: TestBridge;
  let s: AgentSession;
  let root: string;
  let outside: string;

  beforeAll(async () => {
    process.env[PATCH_SWITCH_DELAY_ENV] = "1000";
    try {
      t = await startTestBridge();
    } finally {
      delete process.env[PATCH_SWITCH_DELAY_ENV];
    }
    root = makeProjectDir("phases-swap");
    outside = makeTempDir("phases-outside");
    s = await t.session({ write: true, root, name: "swap" });
  });
  afterAll(async () => t.close());

  it(
    "refuses the rename with path_changed, writes nothing outside the root, and leaves the tree as before",
    { timeout: 30_000 },
    async () => {
      writeFiles(root, { "first.txt": "zero\n", "dir/a.txt": "inside\n" });
      writeFiles(outside, { "a.txt": "outside\n" });
      const before = snapshotTree(root);
      const outsideBefore = snapshotTree(outside);
      const answer = agentGet<Body>(
        url(
          s.m!,
          "a",
          [["wait", 20_000]],
          patchText(
            "*** Update File: first.txt",
            "@@",
            "-zero",
            "+one",
            "*** Update File: dir/a.txt",
            "@@",
            "-inside",
            "+patched",
          ),
        ),
      );
      await until("both temp files are staged", () => tempFiles(root).length === 2);
      // The folder goes aside (still inside the root, the staged temp file with it) and a symlink to outside takes its
      // place: a rename by path would now land outside.
      fs.renameSync(path.join(root, "dir"), path.join(root, "aside"));
      fs.symlinkSync(outside, path.join(root, "dir"));
      // The switch renames first.txt, refuses dir/a.txt, and removes the temp file it staged (now in aside/) before it
      // rolls back; the folder is put back then, so the rollback (which retries a path with a symlink on the way) can
      // check dir/a.txt is as it was.
      await until(
        "the refused file's temp file is removed",
        () => !fs.readdirSync(path.join(root, "aside")).some((n) => n.endsWith(TEMP_SUFFIX)),
      );
      fs.unlinkSync(path.join(root, "dir"));
      fs.renameSync(path.join(root, "aside"), path.join(root, "dir"));
      let body = await answer;
      for (let i = 0; i < POLL_TRIES && body.state === "running"; i++) body = await agentGet<Body>(body.poll as string);

      expect(body).toMatchObject({
        ok: false,
        errorCode: "path_changed",
        errorDetail: { failedAt: "/project/dir/a.txt", appliedBeforeFailure: 1, rolledBack: true },
      });
      expect(snapshotTree(outside)).toEqual(outsideBefore);
      expect(snapshotTree(root)).toEqual(before);
      expect(tempFiles(root)).toEqual([]);
    },
  );
});

/**
 * Reports every fsync this process makes, in the thread pool (fs.fsync) or on the event loop (fs.fsyncSync), to
 * `seen`, then makes it; returns what puts node:fs back.
 */
function watchFsyncs(seen: (fd: number, where: "pool" | "inline") => void): () => void {
  const original = { fsync: fs.fsync, fsyncSync: fs.fsyncSync };
  fs.fsync = ((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
    seen(fd, "pool");
    return original.fsync(fd, callback);
  }) as typeof fs.fsync;
  fs.fsyncSync = ((fd: number) => {
    seen(fd, "inline");
    original.fsyncSync(fd);
  }) as typeof fs.fsyncSync;
  return () => {
    fs.fsync = original.fsync;
    fs.fsyncSync = original.fsyncSync;
  };
}

describe("fsyncs per patch", () => {
  let t: TestBridge;
  let s: AgentSession;
  let root: string;
  let restoreFsyncs: () => void;
  let calls = 0;

  beforeAll(async () => {
    t = await startTestBridge();
    root = makeProjectDir("phases-fsync");
    s = await t.session({ write: true, root, name: "fsync" });
    // Every fsync the process makes, in the thread pool or on the event loop; the journal's are counted apart
    // (store.journalSync.syncs) and taken off.
    restoreFsyncs = watchFsyncs(() => calls++);
  });
  afterAll(async () => {
    restoreFsyncs();
    await t.close();
  });

  it("makes N + K file fsyncs for N files in K folders (a temp file each, then each folder once), not 2N", async () => {
    const files: Record<string, string> = { "d0/gone.txt": "deleted\n" };
    for (let i = 0; i < 12; i++) files[`d${i % 3}/f${i}.txt`] = `value = ${i}\n`;
    writeFiles(root, files);
    const updates = Array.from({ length: 12 }, (_, i) => [
      `*** Update File: d${i % 3}/f${i}.txt`,
      "@@",
      `-value = ${i}`,
      `+value = ${i + 100}`,
    ]).flat();
    const journalBefore = t.bridge.store.journalSync.syncs;
    const before = calls;
    const body = await agentGet<Body>(url(s.m!, "a", [], patchText(...updates, "*** Delete File: d0/gone.txt")));
    expect(body).toMatchObject({ ok: true, state: "succeeded" });
    const journal = t.bridge.store.journalSync.syncs - journalBefore;
    expect(journal).toBeGreaterThan(0);
    // 12 temp files, and d0, d1, d2 once each (the deletion shares d0's).
    expect(calls - before - journal).toBe(12 + 3);
    for (let i = 0; i < 12; i++)
      expect(fs.readFileSync(path.join(root, `d${i % 3}/f${i}.txt`), "utf8")).toBe(`value = ${i + 100}\n`);
    expect(fs.existsSync(path.join(root, "d0/gone.txt"))).toBe(false);
    expect(tempFiles(root)).toEqual([]);
  });
});

describe("apply_patch on a saturated event loop", () => {
  let t: TestBridge;
  let s: AgentSession;
  let root: string;
  let restoreFsyncs: () => void;
  const syncs = { inline: 0, pool: 0 };
  /** fsyncs of files and folders in the project (the temp files and their folder), by where they ran. */
  const inProject = (fd: number) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(root);
    } catch {
      return false;
    }
  };

  beforeAll(async () => {
    t = await startTestBridge();
    root = makeProjectDir("phases-saturated");
    s = await t.session({ write: true, root, name: "saturated" });
    restoreFsyncs = watchFsyncs((fd, where) => {
      if (inProject(fd)) syncs[where]++;
    });
  });
  afterAll(async () => {
    restoreFsyncs();
    await t.close();
  });

  it(
    "runs the same three phases with its fsyncs on the event loop, and lands every patch",
    { timeout: 60_000 },
    async () => {
      const PATCHES = 16;
      const FILES = 5;
      const files: Record<string, string> = {};
      for (let p = 0; p < PATCHES; p++) for (let f = 0; f < FILES; f++) files[`dir/p${p}-f${f}.txt`] = `value = 0\n`;
      writeFiles(root, files);
      // Every event-loop turn made to last 15 ms (a setImmediate that spins, queued again each turn): with the patches
      // queued behind each other in the project's write queue, at least 8 intents are in flight while the first ones
      // commit, which is when commit.ts makes its fsyncs inline (server/mutation/journal/inline-sync.ts).
      let spinning = true;
      const spin = () => {
        const end = performance.now() + 15;
        while (performance.now() < end);
        if (spinning) setImmediate(spin);
      };
      setImmediate(spin);
      let bodies: Body[];
      try {
        bodies = await Promise.all(
          Array.from({ length: PATCHES }, (_, p) =>
            agentGet<Body>(
              url(
                s.m!,
                "a",
                [["wait", 20_000]],
                patchText(
                  ...Array.from({ length: FILES }, (_, f) => [
                    `*** Update File: dir/p${p}-f${f}.txt`,
                    "@@",
                    "-value = 0",
                    `+value = ${p}`,
                  ]).flat(),
                ),
              ),
            ),
          ),
        );
      } finally {
        spinning = false;
      }
      expect(bodies.map((b) => b.state)).toEqual(Array.from({ length: PATCHES }, () => "succeeded"));
      for (let p = 0; p < PATCHES; p++)
        for (let f = 0; f < FILES; f++)
          expect(fs.readFileSync(path.join(root, `dir/p${p}-f${f}.txt`), "utf8")).toBe(`value = ${p}\n`);
      expect(tempFiles(root)).toEqual([]);
      // N + K per patch, wherever they ran; some of them inline.
      expect(syncs.inline + syncs.pool).toBe(PATCHES * (FILES + 1));
      expect(syncs.inline).toBeGreaterThan(0);
    },
  );
});
