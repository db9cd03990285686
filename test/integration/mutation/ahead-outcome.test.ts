// /e and /w record their success ahead of the rename (journal.ts recordAhead), the rename held here by the test-only
// URLBRIDGE_TEST_RENAME_DELAY_MS hook. Until the file changes, nothing may read that success: a rename that fails
// is recorded and answered as the failure it is, and the project's state epoch moves for run=@changed only once
// the file did (a command named by the new epoch while the old file is still there would be replayed as current).
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RENAME_DELAY_ENV } from "../../../server/mutation/journal/test-hooks.js";
import { STATE_FILE_NAME } from "../../../server/store/database.js";
import { TEMP_SUFFIX } from "../../../server/sandbox/fd-ops.js";
import {
  agentGet,
  startTestBridge,
  type AgentSession,
  type TestBridge,
  writeAsAgent,
  mkdirAsAgent,
} from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

type Body = Record<string, unknown> & {
  ok: boolean;
  errorCode?: string;
  errorDetail?: Record<string, unknown>;
  state?: string;
  callId?: string;
  poll?: string;
  stdout?: string;
  dedupe?: string;
};

/** Each write or edit holds its rename this long once its record is durable: time to act in between. */
const RENAME_DELAY_MS = 1500;
const WAIT_TRIES = 400;

describe("a success recorded ahead of its rename", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    process.env[RENAME_DELAY_ENV] = String(RENAME_DELAY_MS);
    t = await startTestBridge();
    delete process.env[RENAME_DELAY_ENV];
    s = await t.session({ write: true, terminal: true });
  });
  afterAll(async () => t.close());

  const record = (callId: string) => {
    const db = new Database(path.join(t.stateDir, STATE_FILE_NAME), { readonly: true, fileMustExist: true });
    try {
      return db
        .prepare("SELECT state, unconfirmed, error_code AS errorCode FROM intents WHERE call_id = ?")
        .get(callId) as { state: string; unconfirmed: number; errorCode: string | null } | undefined;
    } finally {
      db.close();
    }
  };
  const temps = () => fs.readdirSync(t.projectDir).filter((n) => n.endsWith(TEMP_SUFFIX));

  /** Starts the call (wait=0) and returns once its success is recorded and its temp file written, the rename held. */
  async function startHeld(callUrl: string): Promise<Body> {
    const accepted = await agentGet<Body>(callUrl);
    expect(accepted).toMatchObject({ ok: true, state: "running" });
    for (let i = 0; i < WAIT_TRIES && (record(accepted.callId!)?.state !== "succeeded" || temps().length === 0); i++)
      await sleep(5);
    expect(record(accepted.callId!)).toMatchObject({ state: "succeeded", unconfirmed: 1 });
    return accepted;
  }

  async function settled(body: Body): Promise<Body> {
    let out = body;
    for (let i = 0; i < WAIT_TRIES && out.state === "running"; i++) out = await agentGet<Body>(out.poll!);
    return out;
  }

  it("answers and records a rename that fails as write_failed, never as the success recorded ahead", async () => {
    const file = path.join(t.projectDir, "target.txt");
    writeAsAgent(file, "value 1\n");
    const command = url(
      s.m!,
      "x",
      [
        ["run", "@changed"],
        ["wait", 20_000],
      ],
      "echo checked",
    );
    const checked = await agentGet<Body>(command);
    expect(checked).toMatchObject({ ok: true, stdout: "checked\n" });
    const callUrl = url(
      s.m!,
      "e",
      [
        ["path", "target.txt"],
        ["old", "value 1"],
        ["wait", 0],
      ],
      "value 2",
    );
    const accepted = await startHeld(callUrl);
    // A non-empty directory where the file was: the held rename over it fails (EISDIR).
    fs.rmSync(file);
    mkdirAsAgent(file);
    writeAsAgent(path.join(file, "inside.txt"), "x\n");

    const answer = await settled(await agentGet<Body>(accepted.poll!));
    expect(answer).toMatchObject({ ok: false, state: "failed", errorCode: "write_failed", callId: accepted.callId });
    expect(answer.errorDetail).not.toHaveProperty("replaced");
    expect(record(accepted.callId!)).toMatchObject({ state: "failed", unconfirmed: 0, errorCode: "write_failed" });
    expect(await agentGet<Body>(callUrl)).toMatchObject({ ok: false, errorCode: "write_failed", dedupe: "replayed" });
    expect(fs.readFileSync(path.join(file, "inside.txt"), "utf8")).toBe("x\n");
    expect(temps()).toEqual([]);
    // The failed edit changed nothing through the bridge: its epoch bump was taken back, so this replays.
    expect(await agentGet<Body>(command)).toMatchObject({ ok: true, dedupe: "replayed", callId: checked.callId });
  });

  it("moves the state epoch for run=@changed only once the file changed", async () => {
    const file = path.join(t.projectDir, "src.txt");
    writeAsAgent(file, "v1\n");
    const command = url(
      s.m!,
      "x",
      [
        ["run", "@changed"],
        ["wait", 20_000],
      ],
      "cat src.txt",
    );
    expect(await agentGet<Body>(command)).toMatchObject({ ok: true, stdout: "v1\n" });
    const edit = await startHeld(
      url(
        s.m!,
        "e",
        [
          ["path", "src.txt"],
          ["old", "v1"],
          ["wait", 0],
        ],
        "v2",
      ),
    );

    // While the rename is held the project has not changed: this run sees v1, and is named by the old epoch.
    const during = await agentGet<Body>(command);
    expect(during).toMatchObject({ ok: true, stdout: "v1\n" });
    expect(fs.readFileSync(file, "utf8")).toBe("v1\n");

    expect(await settled(await agentGet<Body>(edit.poll!))).toMatchObject({
      ok: true,
      state: "succeeded",
      path: "/project/src.txt",
    });
    expect(fs.readFileSync(file, "utf8")).toBe("v2\n");
    // The change landed after that run: the same URL runs again and sees it, rather than replaying v1.
    const after = await agentGet<Body>(command);
    expect(after).toMatchObject({ ok: true, stdout: "v2\n" });
    expect(after.dedupe).toBeUndefined();
    expect(after.callId).not.toBe(during.callId);
  });
});
