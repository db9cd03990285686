import fs from "node:fs";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PATCH_WRITE_DELAY_ENV } from "../../../server/mutation/journal/test-hooks.js";
import { STATE_FILE_NAME } from "../../../server/store/database.js";
import {
  agentGet,
  startTestBridge,
  type AgentSession,
  type TestBridge,
  writeAsAgent,
  mkdirAsAgent,
} from "../../helpers/bridge.js";
import { patchText, url } from "../mutation/fixtures.js";
import { holdWriteLock, type LockHolder } from "./lock-holder.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; state?: string };
interface Health {
  ok: boolean;
  degraded: boolean;
  store: {
    activityLog: { failing: boolean; pending: number };
    journal: { failing: boolean; lastError: { code: string } | null };
  };
}

/** The old journal connection waited 5 s for a lock on the event loop; anything near it here means it still blocks. */
const EVENT_LOOP_STALL_BOUND_MS = 2000;
/** Health is polled this often, at most this many times (activity retries back off to 5 s). */
const POLL_MS = 100;
const POLL_TRIES = 150;

describe("another process holds the state file's write lock", () => {
  let t: TestBridge;
  let s: AgentSession;
  let holder: LockHolder | undefined;
  const health = async () => (await t.api<Health>("GET", "/api/health")).body;
  async function healthUntil(want: (h: Health) => boolean): Promise<Health> {
    let last = await health();
    for (let i = 0; i < POLL_TRIES && !want(last); i++) {
      await sleep(POLL_MS);
      last = await health();
    }
    return last;
  }

  beforeAll(async () => {
    // Holds each committed file of a patch open for a moment, so the lock can be taken between its run and its record.
    process.env[PATCH_WRITE_DELAY_ENV] = "1500";
    t = await startTestBridge();
    delete process.env[PATCH_WRITE_DELAY_ENV];
    s = await t.session({ write: true });
    writeAsAgent(path.join(t.projectDir, "seen.txt"), "seen\n");
  });
  afterAll(async () => {
    await holder?.release();
    await t.close();
  });

  it("keeps reads and the control plane answering and refuses mutations retryably without running them; all recovers once released", async () => {
    const write = url(s.m!, "w", [["path", "locked.txt"]], "written once\n");
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    holder = await holdWriteLock(path.join(t.stateDir, STATE_FILE_NAME));
    stalls.enable();
    try {
      expect(await agentGet<Body>(url(s.r, "r", [["path", "seen.txt"]]))).toMatchObject({ ok: true });
      const refused = await agentGet<Body>(write);
      expect(refused).toMatchObject({
        ok: false,
        errorCode: "state_store_unavailable",
        retryable: true,
        agentAction: "wait_and_retry",
        errorDetail: { store: "SQLITE_BUSY" },
      });
      expect(fs.existsSync(path.join(t.projectDir, "locked.txt"))).toBe(false);
      // The same URL again while the lock lasts: refused again, still not run.
      expect(await agentGet<Body>(write)).toMatchObject({ ok: false, errorCode: "state_store_unavailable" });
      expect(fs.existsSync(path.join(t.projectDir, "locked.txt"))).toBe(false);
      expect(await agentGet<Body>(url(s.r, "r", [["path", "seen.txt"]]))).toMatchObject({ ok: true });
      const sessions = await t.api<unknown[]>("GET", "/api/sessions");
      expect(sessions.status).toBe(200);
      const during = await healthUntil((h) => h.store.activityLog.failing);
      expect(during).toMatchObject({
        ok: true,
        degraded: true,
        store: { activityLog: { failing: true }, journal: { failing: true, lastError: { code: "SQLITE_BUSY" } } },
      });
      stalls.disable();
      expect(stalls.max / 1e6).toBeLessThan(EVENT_LOOP_STALL_BOUND_MS);
    } finally {
      await holder.release();
      holder = undefined;
    }
    const after = await healthUntil((h) => !h.degraded);
    expect(after).toMatchObject({
      ok: true,
      degraded: false,
      store: { activityLog: { failing: false, pending: 0 }, journal: { failing: false } },
    });
    expect(await agentGet<Body>(write)).toMatchObject({ ok: true, created: true });
    expect(await agentGet<Body>(write)).toMatchObject({ ok: true, dedupe: "replayed" });
    expect(fs.readFileSync(path.join(t.projectDir, "locked.txt"), "utf8")).toBe("written once\n");
  });

  it("answers staging and project creation with state_store_unavailable, not internal_error or a 500, and both work once released", async () => {
    const stage = url(
      s.m!,
      "s",
      [
        ["blob", "locked-blob"],
        ["i", 0],
        ["count", 1],
      ],
      "staged once\n",
    );
    const projectRoot = path.join(t.projectDir, "later-project");
    mkdirAsAgent(projectRoot);
    const create = () =>
      t.api<{ error?: { code: string; message: string }; id?: string }>("POST", "/api/projects", {
        name: "during-lock",
        root: projectRoot,
        permissions: { write: false, terminal: false },
      });
    holder = await holdWriteLock(path.join(t.stateDir, STATE_FILE_NAME));
    try {
      expect(await agentGet<Body>(stage)).toMatchObject({
        ok: false,
        errorCode: "state_store_unavailable",
        retryable: true,
        agentAction: "wait_and_retry",
        errorDetail: { store: "SQLITE_BUSY" },
      });
      const refused = await create();
      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatchObject({ code: "state_store_unavailable" });
      expect(refused.body.error!.message).toMatch(/SQLITE_BUSY.*nothing was changed/);
    } finally {
      await holder.release();
      holder = undefined;
    }
    expect(await agentGet<Body>(stage)).toMatchObject({ ok: true, complete: true });
    expect((await create()).status).toBe(201);
    expect(
      (await t.api<Array<{ name: string }>>("GET", "/api/projects")).body.filter((p) => p.name === "during-lock"),
    ).toHaveLength(1);
  });

  it("an intent that ran before the lock was taken keeps its outcome until the store takes it, then records it once", async () => {
    writeAsAgent(path.join(t.projectDir, "patched.txt"), "one\n");
    const patch = url(s.m!, "a", [["wait", 0]], patchText("*** Update File: patched.txt", "@@", "-one", "+two"));
    const started = await agentGet<Body>(patch);
    expect(started).toMatchObject({ ok: true, state: "running" });
    const poll = started.poll as string;
    // The patch has written its file and is holding its commit open (the test hook); take the lock now.
    for (let i = 0; i < POLL_TRIES && fs.readFileSync(path.join(t.projectDir, "patched.txt"), "utf8") !== "two\n"; i++)
      await sleep(POLL_MS / 5);
    holder = await holdWriteLock(path.join(t.stateDir, STATE_FILE_NAME));
    try {
      const during = await healthUntil((h) => h.store.journal.failing);
      expect(during).toMatchObject({
        degraded: true,
        store: { journal: { failing: true, lastError: { code: "SQLITE_BUSY" } } },
      });
      // Its outcome is not durable yet: a poll and a replay both say it is still running; neither runs it again.
      expect(await agentGet<Body>(poll)).toMatchObject({ ok: true, state: "running" });
      expect(await agentGet<Body>(patch)).toMatchObject({ ok: true, state: "running", dedupe: "joined" });
    } finally {
      await holder.release();
      holder = undefined;
    }
    let done = await agentGet<Body>(poll);
    for (let i = 0; i < POLL_TRIES && done.state === "running"; i++) done = await agentGet<Body>(poll);
    expect(done).toMatchObject({ ok: true, state: "succeeded" });
    expect(await agentGet<Body>(patch)).toMatchObject({ ok: true, state: "succeeded", dedupe: "replayed" });
    expect(fs.readFileSync(path.join(t.projectDir, "patched.txt"), "utf8")).toBe("two\n");
    expect(await healthUntil((h) => !h.degraded)).toMatchObject({ degraded: false });
  });

  it("an intent admitted before the lock but refused its start runs nothing, keeps no record, and runs from the same URL later", async () => {
    writeAsAgent(path.join(t.projectDir, "ahead.txt"), "one\n");
    const patch = url(s.m!, "a", [["wait", 0]], patchText("*** Update File: ahead.txt", "@@", "-one", "+two"));
    expect(await agentGet<Body>(patch)).toMatchObject({ ok: true, state: "running" });
    for (let i = 0; i < POLL_TRIES && fs.readFileSync(path.join(t.projectDir, "ahead.txt"), "utf8") !== "two\n"; i++)
      await sleep(POLL_MS / 5);
    // Admitted now, then queued behind the patch (one writer per project); it starts only after the lock is taken.
    const write = url(
      s.m!,
      "w",
      [
        ["path", "queued.txt"],
        ["wait", 0],
      ],
      "queued once\n",
    );
    const queued = await agentGet<Body>(write);
    expect(queued).toMatchObject({ ok: true, state: "pending" });
    holder = await holdWriteLock(path.join(t.stateDir, STATE_FILE_NAME));
    let refused: Body;
    try {
      refused = await agentGet<Body>(queued.poll as string);
      for (let i = 0; i < POLL_TRIES && refused.ok; i++) refused = await agentGet<Body>(queued.poll as string);
      expect(refused).toMatchObject({
        ok: false,
        errorCode: "state_store_unavailable",
        retryable: true,
        errorDetail: { store: "SQLITE_BUSY" },
      });
      expect(fs.existsSync(path.join(t.projectDir, "queued.txt"))).toBe(false);
    } finally {
      await holder.release();
      holder = undefined;
    }
    expect(await healthUntil((h) => !h.degraded)).toMatchObject({ degraded: false });
    // Its record was withdrawn: the poll no longer knows it, and the same URL runs it now, once.
    expect(await agentGet<Body>(queued.poll as string)).toMatchObject({ ok: false, errorCode: "intent_not_found" });
    let done = await agentGet<Body>(write);
    for (let i = 0; i < POLL_TRIES && done.ok && done.state !== "succeeded"; i++)
      done = await agentGet<Body>(done.poll as string);
    expect(done).toMatchObject({ ok: true, created: true });
    expect(fs.readFileSync(path.join(t.projectDir, "queued.txt"), "utf8")).toBe("queued once\n");
  });
});
