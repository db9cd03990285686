// The operator's review and undo (issue 30, item 5): the control API's /api/sessions/:id/changes and /revert,
// and `urlbridge changes` / `urlbridge revert` (the real CLI as a child process) over a session an agent worked in.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentGet,
  giveToAgent,
  startTestBridge,
  TEST_OPERATOR_TOKEN,
  type AgentSession,
  type TestBridge,
} from "../../helpers/bridge.js";
import { runCli } from "../cli/run-cli.js";
import { url } from "../mutation/fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; callId?: string };

describe("operator review and undo", () => {
  let t: TestBridge;
  let s: AgentSession;
  let env: Record<string, string>;
  const file = (rel: string) => path.join(t.projectDir, rel);
  beforeAll(async () => {
    t = await startTestBridge();
    fs.writeFileSync(file("notes.txt"), "first\r\nsecond\r\n");
    giveToAgent(t.projectDir);
    s = await t.session({ write: true, name: "worker" });
    env = {
      URLBRIDGE_STATE_DIR: t.stateDir,
      URLBRIDGE_CONTROL_PORT: new URL(t.bridge.controlUrl).port,
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    };
  });
  afterAll(async () => t.close());

  it("lists and diffs a session's changes, and reverts one file with the conflict check", async () => {
    const edit = await agentGet<Body>(
      url(s.m!, "e", [
        ["path", "notes.txt"],
        ["old", "second"],
        ["new", "SECOND"],
      ]),
    );
    expect(edit.ok).toBe(true);
    const listed = await t.api<{ intents: Array<{ callId: string }> }>("GET", `/api/sessions/${s.sessionId}/changes`);
    expect(listed.status).toBe(200);
    expect(listed.body.intents.map((i) => i.callId)).toEqual([edit.callId]);
    const diff = await t.api<{ diff: string }>("GET", `/api/sessions/${s.sessionId}/changes?path=notes.txt`);
    expect(diff.body.diff).toContain("-second\r\n+SECOND\r");

    const cliList = await runCli(["changes", s.sessionId], env);
    expect(cliList.stderr).toBe("");
    expect(cliList.code).toBe(0);
    expect(cliList.stdout).toContain(`${edit.callId}  edit`);
    expect(cliList.stdout).toContain("modified   /project/notes.txt");
    const cliDiff = await runCli(["changes", s.sessionId, "--path", "notes.txt"], env);
    expect(cliDiff.stdout).toContain("+SECOND\r");

    // The operator changes the file by hand: the revert refuses, naming it, and --force applies.
    fs.writeFileSync(file("notes.txt"), "hand edit\n");
    const refused = await t.api<{ error: { code: string }; conflicts: Array<{ path: string }> }>(
      "POST",
      `/api/sessions/${s.sessionId}/revert`,
      { path: "notes.txt" },
    );
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      error: { code: "revert_conflict" },
      conflicts: [{ path: "/project/notes.txt" }],
    });
    const cliRefused = await runCli(["revert", s.sessionId, "--path", "notes.txt"], env);
    expect(cliRefused.code).not.toBe(0);
    expect(cliRefused.stderr).toContain("revert_conflict");
    expect(fs.readFileSync(file("notes.txt"), "utf8")).toBe("hand edit\n");
    const forced = await runCli(["revert", s.sessionId, "--path", "notes.txt", "--force"], env);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain("restored   /project/notes.txt");
    expect(fs.readFileSync(file("notes.txt"), "utf8")).toBe("first\r\nsecond\r\n");

    // The operator's revert is a change of the session, listed with the call that made it.
    const after = await t.api<{ intents: Array<{ tool: string }> }>("GET", `/api/sessions/${s.sessionId}/changes`);
    expect(after.body.intents.map((i) => i.tool)).toEqual(["edit", "revert"]);
    const missing = await t.api("POST", `/api/sessions/${s.sessionId}/revert`, {
      intent: "auto:edit:0000000000000000",
    });
    expect(missing.status).toBe(404);
  });
});
