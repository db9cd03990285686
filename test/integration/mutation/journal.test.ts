import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../../server/kernel/tool/definition.js";
import { journalControls } from "../../../server/mutation/journal/controls.js";
import { PATCH_WRITE_DELAY_ENV } from "../../../server/mutation/journal/test-hooks.js";
import { agentGet, startTestBridge, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { patchText, url } from "./fixtures.js";

type Body = Record<string, unknown> & {
  ok: boolean;
  callId?: string;
  dedupe?: string;
  state?: string;
  errorCode?: string;
};

const running: TestBridge[] = [];
async function bridge(...args: Parameters<typeof startTestBridge>): Promise<TestBridge> {
  const t = await startTestBridge(...args);
  running.push(t);
  return t;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((t) => t.close()));
  delete process.env[PATCH_WRITE_DELAY_ENV];
});

/** A real mutation tool, run through the real journal runner, that counts how often it executes. */
function probeTool() {
  let executions = 0;
  const tool = defineTool({
    id: "epoch_probe",
    route: "probe",
    longRoutes: [],
    capability: "mutation",
    permission: "write",
    description: "test-only: counts its executions",
    example: "/probe?label=x",
    schema: z.object({ label: z.string(), ...journalControls }),
    output: z.strictObject({ ok: z.literal(true), label: z.string(), execution: z.number() }),
    url: {},
    journal: { repeatOnStateChange: true, bumpsEpoch: "never" },
    async execute(args) {
      executions += 1;
      return { ok: true, label: args.label, execution: executions };
    },
  });
  return { tool, executions: () => executions };
}

describe("intent journal", () => {
  it("executes 50 concurrent identical GETs once, and replays the record after a restart without executing", async () => {
    const t = await bridge();
    const counter = path.join(t.projectDir, "counter.txt");
    writeAsAgent(counter, "counter: 0\n");
    const s = await t.session({ write: true });
    // Each execution turns the one "0" into "0+"; a second execution would leave "0++".
    const edit = url(
      s.m!,
      "e",
      [
        ["path", "counter.txt"],
        ["old", "0"],
        ["wait", 1500],
      ],
      "0+",
    );
    const bodies = await Promise.all(Array.from({ length: 50 }, () => agentGet<Body>(edit)));

    expect(fs.readFileSync(counter, "utf8")).toBe("counter: 0+\n");
    expect(new Set(bodies.map((b) => b.callId)).size).toBe(1);
    expect(bodies.every((b) => b.ok && b.state === "succeeded")).toBe(true);
    expect(bodies.filter((b) => b.dedupe === undefined)).toHaveLength(1);
    expect(
      bodies.filter((b) => b.dedupe !== undefined).every((b) => b.dedupe === "joined" || b.dedupe === "replayed"),
    ).toBe(true);
    const first = bodies.find((b) => b.dedupe === undefined)!;

    await t.close();
    // Put the file back: if the replay after restart executed, it would become "0+" again.
    writeAsAgent(counter, "counter: 0\n");
    const again = await bridge({}, { stateDir: t.stateDir });
    const replayed = await agentGet<Body>(edit.replace(t.bridge.dataUrl, again.bridge.dataUrl));
    expect(fs.readFileSync(counter, "utf8")).toBe("counter: 0\n");
    expect(replayed).toEqual({ ...first, dedupe: "replayed" });
  });

  it("refuses wait outside 0..20000 before creating an intent, with the exact clamped URL", async () => {
    const t = await bridge();
    const s = await t.session({ write: true });
    const body = await agentGet<Body>(
      url(
        s.m!,
        "w",
        [
          ["path", "w.txt"],
          ["wait", 50000],
        ],
        "x",
      ),
    );
    expect(body).toMatchObject({
      ok: false,
      errorCode: "invalid_parameter",
      repair: url(
        s.m!,
        "w",
        [
          ["path", "w.txt"],
          ["wait", 20000],
        ],
        "x",
      ),
    });
    expect(fs.existsSync(path.join(t.projectDir, "w.txt"))).toBe(false);
    const repaired = await agentGet<Body>(body.repair as string);
    expect(repaired).toMatchObject({ ok: true, state: "succeeded" });
  });

  it("runs an identical call again only with a new run= nonce", async () => {
    const t = await bridge();
    writeAsAgent(path.join(t.projectDir, "n.txt"), "x");
    const s = await t.session({ write: true });
    const once = url(
      s.m!,
      "e",
      [
        ["path", "n.txt"],
        ["old", "x"],
      ],
      "xy",
    );
    const first = await agentGet<Body>(once);
    const replay = await agentGet<Body>(once);
    const repeat = await agentGet<Body>(
      url(
        s.m!,
        "e",
        [
          ["path", "n.txt"],
          ["old", "x"],
          ["run", "2"],
        ],
        "xy",
      ),
    );
    expect(replay).toMatchObject({ callId: first.callId, dedupe: "replayed" });
    expect(repeat.callId).not.toBe(first.callId);
    expect(repeat).toMatchObject({ ok: true, state: "succeeded" });
    expect(fs.readFileSync(path.join(t.projectDir, "n.txt"), "utf8")).toBe("xyy");
  });

  it("accepts an explicit call= id, refuses reusing it for other arguments, and refuses call= with run=", async () => {
    const t = await bridge();
    const s = await t.session({ write: true });
    const made = await agentGet<Body>(
      url(
        s.m!,
        "w",
        [
          ["path", "c.txt"],
          ["call", "my-call.1"],
        ],
        "one",
      ),
    );
    expect(made).toMatchObject({ ok: true, callId: "my-call.1" });
    const reused = await agentGet<Body>(
      url(
        s.m!,
        "w",
        [
          ["path", "c.txt"],
          ["call", "my-call.1"],
        ],
        "two",
      ),
    );
    expect(reused).toMatchObject({ ok: false, errorCode: "call_id_conflict" });
    const both = await agentGet<Body>(
      url(
        s.m!,
        "w",
        [
          ["path", "d.txt"],
          ["call", "x"],
          ["run", "2"],
        ],
        "two",
      ),
    );
    expect(both).toMatchObject({ ok: false, errorCode: "conflicting_parameters" });
    expect(fs.readFileSync(path.join(t.projectDir, "c.txt"), "utf8")).toBe("one");
    expect(fs.existsSync(path.join(t.projectDir, "d.txt"))).toBe(false);
  });

  it("answers a long intent with an exact poll URL; /j waits for it and keeps failures structured", async () => {
    process.env[PATCH_WRITE_DELAY_ENV] = "250";
    const t = await bridge();
    const s = await t.session({ write: true });
    const patch = url(
      s.m!,
      "a",
      [["wait", 0]],
      patchText("*** Add File: p/one.txt", "+1", "*** Add File: p/two.txt", "+2"),
    );
    const bodies = await Promise.all([agentGet<Body>(patch), agentGet<Body>(patch), agentGet<Body>(patch)]);
    for (const b of bodies) {
      expect(b).toMatchObject({ ok: true, agentAction: "poll", callId: bodies[0]!.callId });
      expect(["pending", "running"]).toContain(b.state);
      expect(b.poll).toBe(
        url(s.m!, "j", [
          ["call", b.callId!],
          ["wait", 1000],
        ]),
      );
    }
    let polled = await agentGet<Body>(bodies[0]!.poll as string);
    while (polled.state !== "succeeded") polled = await agentGet<Body>(bodies[0]!.poll as string);
    expect(polled).toMatchObject({ ok: true, tool: "apply_patch", summary: expect.stringContaining("2 added") });
    expect(fs.readFileSync(path.join(t.projectDir, "p/two.txt"), "utf8")).toBe("2\n");

    const failed = await agentGet<Body>(
      url(
        s.m!,
        "e",
        [
          ["path", "p/one.txt"],
          ["old", "absent"],
        ],
        "x",
      ),
    );
    const failedPoll = await agentGet<Body>(url(s.m!, "j", [["call", failed.callId!]]));
    expect(failedPoll).toMatchObject({
      ok: false,
      errorCode: "edit_no_match",
      state: "failed",
      agentAction: "reread_then_retry",
      retryable: false,
    });
    expect(failedPoll.repairHint).toBe(failed.repairHint);
    expect(await agentGet<Body>(url(s.m!, "j", [["call", "auto:edit:0000"]]))).toMatchObject({
      ok: false,
      errorCode: "intent_not_found",
    });
  });

  it("keeps the caller's wait in every poll URL: the first answer's, a join's and /j's own (issue 27 item 4)", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = defineTool({
      id: "held_probe",
      route: "held",
      longRoutes: [],
      capability: "mutation",
      permission: "write",
      description: "test-only: runs until the test releases it",
      example: "/held?label=x",
      schema: z.object({ label: z.string(), ...journalControls }),
      output: z.strictObject({ ok: z.literal(true), label: z.string() }),
      url: {},
      journal: { bumpsEpoch: "never" },
      async execute(args) {
        await gate;
        return { ok: true as const, label: args.label };
      },
    });
    const t = await bridge({}, { extraTools: [held] });
    const s = await t.session({ write: true });
    const first = await agentGet<Body>(
      url(s.m!, "held", [
        ["label", "a"],
        ["wait", 300],
      ]),
    );
    expect(first).toMatchObject({ ok: true, state: "running", agentAction: "poll" });
    expect(first.poll).toBe(
      url(s.m!, "j", [
        ["call", first.callId!],
        ["wait", 300],
      ]),
    );
    const joined = await agentGet<Body>(
      url(s.m!, "held", [
        ["label", "a"],
        ["wait", 200],
      ]),
    );
    expect(joined).toMatchObject({ ok: true, state: "running", dedupe: "joined", callId: first.callId });
    expect(joined.poll).toBe(
      url(s.m!, "j", [
        ["call", first.callId!],
        ["wait", 200],
      ]),
    );
    const polled = await agentGet<Body>(
      url(s.m!, "j", [
        ["call", first.callId!],
        ["wait", 400],
      ]),
    );
    expect(polled).toMatchObject({ ok: true, state: "running", tool: "held_probe" });
    expect(polled.poll).toBe(
      url(s.m!, "j", [
        ["call", first.callId!],
        ["wait", 400],
      ]),
    );
    release();
    expect(await agentGet<Body>(polled.poll as string)).toMatchObject({ ok: true, state: "succeeded", label: "a" });
  });

  it("offers an exact repeat URL once the project's state epoch moved, and only then", async () => {
    const probe = probeTool();
    const t = await bridge({}, { extraTools: [probe.tool] });
    const s = await t.session({ write: true });
    const call = url(s.m!, "probe", [["label", "a"]]);
    expect(await agentGet<Body>(call)).toMatchObject({ ok: true, execution: 1 });
    const quiet = await agentGet<Body>(call);
    expect(quiet).toMatchObject({ dedupe: "replayed", execution: 1 });
    expect(quiet.repeat).toBeUndefined();

    await agentGet(url(s.m!, "w", [["path", "changed.txt"]], "state moved"));
    const stale = await agentGet<Body>(call);
    expect(stale).toMatchObject({ dedupe: "replayed", execution: 1 });
    expect(stale.repeat).toMatch(new RegExp(`^${s.m!}/probe\\?label=a&run=r[0-9a-f]{10}$`));
    expect((await agentGet<Body>(call)).repeat).toBe(stale.repeat);
    expect(probe.executions()).toBe(1);

    expect(await agentGet<Body>(stale.repeat as string)).toMatchObject({ ok: true, execution: 2 });
    const repeatedReplay = await agentGet<Body>(stale.repeat as string);
    expect(repeatedReplay).toMatchObject({ dedupe: "replayed", execution: 2 });
    expect(repeatedReplay.repeat).toBeUndefined();
  });

  it.each<
    [{ write: boolean; terminal: boolean }, string, Array<[string, string | number]>, string | undefined, string]
  >([
    [
      { write: false, terminal: false },
      "s",
      [
        ["blob", "b"],
        ["i", 0],
        ["count", 1],
      ],
      "x",
      "write|terminal",
    ],
    [{ write: false, terminal: false }, "j", [["call", "c"]], undefined, "write|terminal"],
    [{ write: false, terminal: true }, "w", [["path", "x"]], "x", "write"],
    [{ write: true, terminal: false }, "x", [], "true", "terminal"],
  ])("answers tool_not_enabled naming the permission for %j on /%s", async (perms, route, params, raw, permission) => {
    const t = await bridge();
    const s = await t.session(perms);
    const base = s.m ?? mutationBaseOf(t, s.sessionId);
    const body = await agentGet<Body>(url(base, route, params, raw));
    expect(body).toMatchObject({ ok: false, errorCode: "tool_not_enabled", errorDetail: { permission } });
  });

  it("lets /s, /b and /j work with only one of write or terminal on", async () => {
    const t = await bridge();
    const s = await t.session({ write: false, terminal: true });
    expect(
      await agentGet<Body>(
        url(
          s.m!,
          "s",
          [
            ["blob", "b"],
            ["i", 0],
            ["count", 1],
          ],
          "x",
        ),
      ),
    ).toMatchObject({ ok: true, complete: true });
    expect(await agentGet<Body>(url(s.m!, "b", [["blob", "b"]]))).toMatchObject({ ok: true, complete: true });
    expect(await agentGet<Body>(url(s.m!, "j", [["call", "nope"]]))).toMatchObject({
      ok: false,
      errorCode: "intent_not_found",
    });
  });

  it("starts a rotated session generation with a clean journal and staging", async () => {
    const t = await bridge();
    const s = await t.session({ write: true });
    const made = await agentGet<Body>(url(s.m!, "w", [["path", "r.txt"]], "x"));
    await agentGet(
      url(
        s.m!,
        "s",
        [
          ["blob", "b"],
          ["i", 0],
          ["count", 1],
        ],
        "x",
      ),
    );
    const rotated = await t.api<{ initUrl: string }>("POST", `/api/sessions/${s.sessionId}/rotate`);
    const init = await agentGet<{ bases: { m: string } }>(rotated.body.initUrl);
    expect(await agentGet<Body>(url(init.bases.m, "j", [["call", made.callId!]]))).toMatchObject({
      ok: false,
      errorCode: "intent_not_found",
    });
    expect(await agentGet<Body>(url(init.bases.m, "b"))).toMatchObject({ ok: true, blobs: [] });
  });
});

/** The mutation token exists for every session even when Init does not advertise it; tests reach it through the store. */
function mutationBaseOf(t: TestBridge, sessionId: string): string {
  const session = t.bridge.store.sessions.get(sessionId)!;
  const token = t.bridge.store.sessions.capabilitiesFor(sessionId, session.generation).mutation!;
  return `${t.bridge.dataUrl}/v0/${token}`;
}
