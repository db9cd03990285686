// Runs the real server as a child process and SIGKILLs it while a write's or edit's success is recorded but not
// yet confirmed, then restarts it. The success is recorded ahead of the rename: killed before the rename (held by
// the test-only URLBRIDGE_TEST_RENAME_DELAY_MS hook), the file is untouched and the record interrupted, not applied;
// killed after it (its directory fsync held by URLBRIDGE_TEST_DIRECTORY_SYNC_DELAY_MS), a change on disk is
// confirmed as recorded, and one a power loss undid is recorded interrupted, not applied.
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { STATE_FILE_NAME } from "../../../server/store/database.js";
import { DIRECTORY_SYNC_DELAY_ENV, RENAME_DELAY_ENV } from "../../../server/mutation/journal/test-hooks.js";
import { TEMP_SUFFIX } from "../../../server/sandbox/fd-ops.js";
import { agentGet, makeTempDir, writeAsAgent, makeProjectDir } from "../../helpers/bridge.js";
import {
  controlApi,
  killServerProcesses,
  startServerProcess,
  type ServerProcess,
} from "../../helpers/server-process.js";
import { url } from "./fixtures.js";

type Body = Record<string, unknown> & {
  ok: boolean;
  errorCode?: string;
  callId?: string;
  state?: string;
  errorDetail?: Record<string, unknown>;
};

afterEach(killServerProcesses);

/** How long the test waits for the outcome to be recorded before it kills the process. */
const RECORD_WAIT_MS = 20_000;

/** The intent's row as the state file holds it, read through a second connection as another process would. */
function recordOf(
  stateDir: string,
  callId: string,
): { state: string; unconfirmed: number; result: string | null } | undefined {
  const db = new Database(path.join(stateDir, STATE_FILE_NAME), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT state, unconfirmed, result FROM intents WHERE call_id = ?").get(callId) as
      { state: string; unconfirmed: number; result: string | null } | undefined;
  } finally {
    db.close();
  }
}

/**
 * Starts a server held by the test-only delay `holdEnv`, gives it a project on `root` and a session, and makes the
 * call, which answers "running" (wait=0) while the server holds it at that point.
 */
async function startHeldCall(
  stateDir: string,
  root: string,
  holdEnv: string,
  call: (m: string) => string,
): Promise<{ first: ServerProcess; callUrl: string; accepted: Body }> {
  const first = await startServerProcess({ stateDir, env: { [holdEnv]: "60000" } });
  const project = await controlApi<{ id: string }>(first, "POST", "/api/projects", {
    name: "held",
    root,
    permissions: { write: true, terminal: false },
  });
  const session = await controlApi<{ initUrl: string }>(first, "POST", "/api/sessions", { projectId: project.id });
  const m = (await agentGet<{ bases: { m: string } }>(session.initUrl)).bases.m;
  const callUrl = call(m);
  const accepted = await agentGet<Body>(callUrl);
  expect(accepted).toMatchObject({ ok: true, state: "running", agentAction: "poll" });
  return { first, callUrl, accepted };
}

interface Case {
  name: string;
  /** The call, given the session's mutation base; wait=0 so it answers "running" at once. */
  call: (m: string) => string;
  before: string | undefined;
  after: string;
  /** What the disk holds when the process is gone: the renamed file, or what a lost rename leaves. */
  lostRename: boolean;
  expected: Record<string, unknown>;
}

const cases: Case[] = [
  {
    name: "confirms an edit whose rename is on disk, replaying the answer it never sent",
    call: (m) =>
      url(
        m,
        "e",
        [
          ["path", "f.txt"],
          ["old", "value 1"],
          ["wait", 0],
        ],
        "value 2",
      ),
    before: "head\nvalue 1\n",
    after: "head\nvalue 2\n",
    lostRename: false,
    expected: { ok: true, state: "succeeded", dedupe: "replayed", path: "/project/f.txt", line: 2 },
  },
  {
    name: "records an edit whose rename a power loss undid as interrupted and not applied, never as a success",
    call: (m) =>
      url(
        m,
        "e",
        [
          ["path", "f.txt"],
          ["old", "value 1"],
          ["wait", 0],
        ],
        "value 2",
      ),
    before: "head\nvalue 1\n",
    after: "head\nvalue 2\n",
    lostRename: true,
    expected: {
      ok: false,
      state: "failed",
      dedupe: "replayed",
      errorCode: "interrupted",
      errorDetail: expect.objectContaining({ applied: false, path: "/project/f.txt" }),
    },
  },
  {
    name: "records a new file's write whose rename a power loss undid as interrupted and not applied",
    call: (m) =>
      url(
        m,
        "w",
        [
          ["path", "f.txt"],
          ["wait", 0],
        ],
        "fresh\n",
      ),
    before: undefined,
    after: "fresh\n",
    lostRename: true,
    expected: {
      ok: false,
      state: "failed",
      dedupe: "replayed",
      errorCode: "interrupted",
      errorDetail: expect.objectContaining({ applied: false }),
    },
  },
];

describe("an outcome recorded before its directory fsync finished", () => {
  it.each(cases)("$name", { timeout: 60_000 }, async ({ call, before, after, lostRename, expected }) => {
    const stateDir = makeTempDir("unconfirmed-state");
    const root = makeProjectDir("unconfirmed-project");
    const file = path.join(root, "f.txt");
    if (before !== undefined) writeAsAgent(file, before);

    const { first, callUrl, accepted } = await startHeldCall(stateDir, root, DIRECTORY_SYNC_DELAY_ENV, call);

    // The success is recorded (ahead of the rename), the file renamed into place, the answer held back: kill the
    // process right there.
    const deadline = Date.now() + RECORD_WAIT_MS;
    const renamed = () => fs.existsSync(file) && fs.readFileSync(file, "utf8") === after;
    while ((recordOf(stateDir, accepted.callId!)?.state !== "succeeded" || !renamed()) && Date.now() < deadline)
      await sleep(20);
    expect(recordOf(stateDir, accepted.callId!)).toMatchObject({ state: "succeeded", unconfirmed: 1 });
    expect(fs.readFileSync(file, "utf8")).toBe(after);
    first.child.kill("SIGKILL");
    await first.exited;

    // A power loss can lose the rename's directory entry while the journal's record survived: the old file again.
    if (lostRename) {
      if (before === undefined) fs.rmSync(file);
      else writeAsAgent(file, before);
    }

    const second = await startServerProcess({ stateDir });
    expect(recordOf(stateDir, accepted.callId!)).toMatchObject({ unconfirmed: 0 });
    const replayed = await agentGet<Body>(callUrl.replace(first.dataUrl, second.dataUrl));
    expect(replayed).toMatchObject({ ...expected, callId: accepted.callId });
    if (!replayed.ok) expect(typeof replayed.retry).toBe("string");
    // Never re-run: the file is what the disk held when the bridge came back.
    const expectedNow = lostRename ? before : after;
    if (expectedNow === undefined) expect(fs.existsSync(file)).toBe(false);
    else expect(fs.readFileSync(file, "utf8")).toBe(expectedNow);
    expect(fs.readdirSync(root).filter((n) => n.endsWith(TEMP_SUFFIX))).toEqual([]);

    second.child.kill("SIGTERM");
    await second.exited;
  });

  it("confirms the record right after it answers when nothing stops it", { timeout: 60_000 }, async () => {
    const stateDir = makeTempDir("unconfirmed-state");
    const root = makeProjectDir("unconfirmed-project");
    writeAsAgent(path.join(root, "f.txt"), "value 1\n");
    const server = await startServerProcess({ stateDir });
    const project = await controlApi<{ id: string }>(server, "POST", "/api/projects", {
      name: "confirmed",
      root,
      permissions: { write: true, terminal: false },
    });
    const session = await controlApi<{ initUrl: string }>(server, "POST", "/api/sessions", { projectId: project.id });
    const m = (await agentGet<{ bases: { m: string } }>(session.initUrl)).bases.m;
    const body = await agentGet<Body>(
      url(
        m,
        "e",
        [
          ["path", "f.txt"],
          ["old", "value 1"],
        ],
        "value 2",
      ),
    );
    expect(body).toMatchObject({ ok: true, state: "succeeded" });
    // The confirmation commits in the turn after the answer: give it a bounded moment.
    const deadline = Date.now() + RECORD_WAIT_MS;
    while (recordOf(stateDir, body.callId!)?.unconfirmed !== 0 && Date.now() < deadline) await sleep(10);
    expect(recordOf(stateDir, body.callId!)).toMatchObject({ state: "succeeded", unconfirmed: 0 });
    server.child.kill("SIGTERM");
    await server.exited;
  });
});

interface AheadCase {
  name: string;
  call: (m: string) => string;
  before: string | undefined;
  expected: Record<string, unknown>;
}

const aheadCases: AheadCase[] = [
  {
    name: "an edit killed before its rename: interrupted, not applied, the file untouched",
    call: (m) =>
      url(
        m,
        "e",
        [
          ["path", "f.txt"],
          ["old", "value 1"],
          ["wait", 0],
        ],
        "value 2",
      ),
    before: "head\nvalue 1\n",
    expected: {
      ok: false,
      state: "failed",
      dedupe: "replayed",
      errorCode: "interrupted",
      errorDetail: expect.objectContaining({ applied: false, path: "/project/f.txt" }),
    },
  },
  {
    name: "a new file's write killed before its rename: interrupted, not applied, no file",
    call: (m) =>
      url(
        m,
        "w",
        [
          ["path", "f.txt"],
          ["wait", 0],
        ],
        "fresh\n",
      ),
    before: undefined,
    expected: {
      ok: false,
      state: "failed",
      dedupe: "replayed",
      errorCode: "interrupted",
      errorDetail: expect.objectContaining({ applied: false }),
    },
  },
];

describe("an outcome recorded ahead of its rename", () => {
  it.each(aheadCases)("$name", { timeout: 60_000 }, async ({ call, before, expected }) => {
    const stateDir = makeTempDir("ahead-state");
    const root = makeProjectDir("ahead-project");
    const file = path.join(root, "f.txt");
    if (before !== undefined) writeAsAgent(file, before);
    const temps = () => fs.readdirSync(root).filter((n) => n.endsWith(TEMP_SUFFIX));

    const { first, callUrl, accepted } = await startHeldCall(stateDir, root, RENAME_DELAY_ENV, call);

    // Recorded as a success (unconfirmed) and its temp file written, the rename held: the file has not changed.
    const deadline = Date.now() + RECORD_WAIT_MS;
    while (
      (recordOf(stateDir, accepted.callId!)?.state !== "succeeded" || temps().length === 0) &&
      Date.now() < deadline
    )
      await sleep(20);
    expect(recordOf(stateDir, accepted.callId!)).toMatchObject({ state: "succeeded", unconfirmed: 1 });
    expect(temps()).toHaveLength(1);
    if (before === undefined) expect(fs.existsSync(file)).toBe(false);
    else expect(fs.readFileSync(file, "utf8")).toBe(before);
    // Nothing that asks this process reports the success yet: a poll and the same URL say it is still running.
    const poll = await agentGet<Body>(accepted.poll as string);
    expect(poll).toMatchObject({ ok: true, state: "running" });
    expect(await agentGet<Body>(callUrl)).toMatchObject({ ok: true, state: "running", dedupe: "joined" });
    first.child.kill("SIGKILL");
    await first.exited;

    const second = await startServerProcess({ stateDir });
    expect(recordOf(stateDir, accepted.callId!)).toMatchObject({ state: "failed", unconfirmed: 0 });
    const replayed = await agentGet<Body>(callUrl.replace(first.dataUrl, second.dataUrl));
    expect(replayed).toMatchObject({ ...expected, callId: accepted.callId });
    expect(typeof replayed.retry).toBe("string");
    // Never re-run, and recovery removed the temp file the rename never took.
    if (before === undefined) expect(fs.existsSync(file)).toBe(false);
    else expect(fs.readFileSync(file, "utf8")).toBe(before);
    expect(temps()).toEqual([]);

    second.child.kill("SIGTERM");
    await second.exited;
  });
});
