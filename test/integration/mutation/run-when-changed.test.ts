// run=@changed (issue 14): a test command re-run only when the project changed since its recorded run. The same
// URL in the same epoch replays (hidden retries and concurrent copies run nothing more); after any change, it runs.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentGet,
  giveToAgent,
  startTestBridge,
  type AgentSession,
  type TestBridge,
  writeAsAgent,
} from "../../helpers/bridge.js";

type Body = { ok: boolean; state?: string; dedupe?: string; stdout?: string; callId?: string; errorCode?: string };

describe("run=@changed", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge();
    writeAsAgent(path.join(t.projectDir, "src.txt"), "v1\n");
    giveToAgent(t.projectDir);
    s = await t.session({ write: true, terminal: true });
  });
  afterAll(async () => t.close());

  const runs = () => fs.readFileSync(path.join(t.projectDir, "runs.log"), "utf8").split("\n").filter(Boolean).length;
  const testUrl = () => `${s.m}/x?run=@changed&wait=20000&raw=echo~sran~s%3E%3E~sruns.log;~swc~s-l~s%3C~sruns.log`;

  it("runs once, replays while nothing changed (its own run included), and runs again after a change", async () => {
    const first = await agentGet<Body>(testUrl());
    expect(first, JSON.stringify(first)).toMatchObject({ ok: true, state: "succeeded" });
    expect(first.dedupe).toBeUndefined();
    expect(runs()).toBe(1);

    const replay = await agentGet<Body>(testUrl());
    expect(replay).toMatchObject({ ok: true, dedupe: "replayed", callId: first.callId });
    expect(runs()).toBe(1);

    await agentGet(`${s.r}/r?path=src.txt`);
    expect(await agentGet<Body>(`${s.m}/w?path=src.txt&raw=v2~n`)).toMatchObject({ ok: true });
    const after = await agentGet<Body>(testUrl());
    expect(after).toMatchObject({ ok: true, state: "succeeded" });
    expect(after.dedupe).toBeUndefined();
    expect(after.callId).not.toBe(first.callId);
    expect(runs()).toBe(2);

    // Five copies at once in the same epoch (a proxy's retries) are one intent, already recorded.
    const copies = await Promise.all(Array.from({ length: 5 }, () => agentGet<Body>(testUrl())));
    for (const c of copies) expect(c).toMatchObject({ ok: true, callId: after.callId });
    expect(runs()).toBe(2);
  });

  it("refuses any other nonce spelled with @, and keeps plain nonces as they were", async () => {
    expect(await agentGet<Body>(`${s.m}/x?run=@later&raw=true`)).toMatchObject({
      ok: false,
      errorCode: "invalid_parameter",
    });
    const a = await agentGet<Body>(`${s.m}/x?run=changed&raw=true`);
    const b = await agentGet<Body>(`${s.m}/x?run=changed&raw=true`);
    expect(b).toMatchObject({ ok: true, dedupe: "replayed", callId: a.callId });
  });
});
