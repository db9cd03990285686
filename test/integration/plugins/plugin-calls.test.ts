// Plugin tools through /k: discovery with full schemas, calls with raw JSON and with staged JSON, exactly-once
// mutations under replay, wrong-base repairs both ways, and an authority that can narrow but never widen.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentGet,
  giveToAgent,
  makeTempDir,
  startTestBridge,
  type AgentSession,
  type TestBridge,
} from "../../helpers/bridge.js";
import { listOutput, noteAppendOutput, noteReadOutput, notesPlugin } from "../../helpers/notes-plugin.js";
import { url } from "../mutation/fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; repair?: string };

const k = (base: string, tool: string, args: unknown, extra: Array<[string, string | number]> = []) =>
  url(base, "k", [["plugin", "notes"], ["tool", tool], ...extra], JSON.stringify(args));

describe("plugin tools through /k", () => {
  let t: TestBridge;
  let s: AgentSession;
  let notes: string;
  const lines = (name: string) => fs.readFileSync(path.join(notes, name), "utf8").split("\n").filter(Boolean);

  beforeAll(async () => {
    t = await startTestBridge({}, { plugins: [notesPlugin()] });
    notes = path.join(t.projectDir, "notes");
    fs.mkdirSync(notes);
    fs.writeFileSync(path.join(notes, "todo.txt"), "first\n");
    fs.mkdirSync(path.join(t.projectDir, "sub"));
    fs.writeFileSync(path.join(t.projectDir, "sub", "inner.txt"), "x");
    s = await t.session({ write: true, terminal: false });
  });
  afterAll(async () => t.close());

  it("counts the plugin's tools in the session's tool list, named as MCP offers them, by the project's permissions", async () => {
    const tools = async (sessionId: string) =>
      (await t.api<{ tools: string[] }>("GET", `/api/sessions/${sessionId}`)).body.tools;
    const writable = await tools(s.sessionId);
    const listed = await fetch(`${t.bridge.dataUrl}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${new URL(s.m!).pathname.split("/")[2]}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    const mcpNames = ((await listed.json()) as { result: { tools: Array<{ name: string }> } }).result.tools
      .map((tool) => tool.name)
      .filter((name) => name.startsWith("notes_"));
    expect(mcpNames.length).toBeGreaterThan(1);
    expect(writable.filter((id) => id.startsWith("notes_")).sort()).toEqual(mcpNames.sort());
    const readOnly = await t.session({
      write: false,
      terminal: false,
      root: path.join(t.projectDir, "sub"),
      name: "ro",
    });
    expect((await tools(readOnly.sessionId)).filter((id) => id.startsWith("notes_"))).not.toContain(
      "notes_note_append",
    );
  });

  it("lists the plugin, and describes its tools with input and output schemas and a ready call URL", async () => {
    const list = await agentGet<
      Body & { plugins: Array<{ id: string; toolCount: number; status: { state: string } }> }
    >(`${s.r}/k`);
    expect(list.plugins).toEqual([expect.objectContaining({ id: "notes", toolCount: 4, status: { state: "ready" } })]);
    const described = await agentGet<Body & { tools: Array<Record<string, unknown>> }>(`${s.r}/k?plugin=notes`);
    const byId = Object.fromEntries(described.tools.map((tool) => [tool.id, tool]));
    expect(byId.note_read).toMatchObject({ capability: "read", base: "r", enabled: true, params: ["name"] });
    expect(byId.note_append).toMatchObject({ capability: "mutation", base: "m", enabled: true });
    expect(byId.note_read!.inputSchema).toMatchObject({
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
    });
    expect(byId.note_append!.outputSchema).toMatchObject({
      type: "object",
      properties: { lines: { type: "integer" } },
    });
    // The advertised call URL works as given.
    const called = await agentGet<Body>(byId.note_read!.call as string);
    expect(noteReadOutput.parse(called)).toEqual({ ok: true, name: "todo.txt", text: "first\n", root: "/project" });
  });

  it("runs a read tool with raw JSON, validating the arguments with its schema", async () => {
    expect(await agentGet(k(s.r, "note_read", { name: "todo.txt" }))).toMatchObject({ ok: true, text: "first\n" });
    expect(await agentGet(k(s.r, "note_read", { name: "../etc/passwd" }))).toMatchObject({
      ok: false,
      errorCode: "invalid_parameter",
    });
    expect(await agentGet(k(s.r, "note_read", { name: "todo.txt", extra: 1 }))).toMatchObject({
      ok: false,
      errorCode: "invalid_parameter",
    });
    expect(await agentGet(k(s.r, "note_read", {}))).toMatchObject({ ok: false, errorCode: "missing_parameter" });
    expect(
      await agentGet(
        url(
          s.r,
          "k",
          [
            ["plugin", "notes"],
            ["tool", "note_read"],
          ],
          "{not json",
        ),
      ),
    ).toMatchObject({ ok: false, errorCode: "plugin_arguments_invalid", retryable: false });
    expect(
      await agentGet(
        url(
          s.r,
          "k",
          [
            ["plugin", "notes"],
            ["tool", "note_read"],
          ],
          "[1]",
        ),
      ),
    ).toMatchObject({ ok: false, errorCode: "plugin_arguments_invalid" });
    expect(await agentGet(k(s.r, "nope", {}))).toMatchObject({
      ok: false,
      errorCode: "unknown_plugin_tool",
      errorDetail: { tools: ["note_read", "note_append", "folder_list", "shell_probe"] },
    });
    expect(
      await agentGet(
        url(s.r, "k", [
          ["plugin", "absent"],
          ["tool", "x"],
        ]),
      ),
    ).toMatchObject({ ok: false, errorCode: "unknown_plugin" });
  });

  it("executes a mutation once however often or concurrently its URL is fetched, and whatever the key order", async () => {
    const before = lines("todo.txt").length;
    const first = await agentGet<Body>(k(s.m!, "note_append", { name: "todo.txt", line: "once" }));
    expect(first).toMatchObject({ ok: true, lines: before + 1 });
    expect(first.callId).toMatch(/^auto:notes\.note_append:/);
    const replay = await agentGet<Body>(k(s.m!, "note_append", { name: "todo.txt", line: "once" }));
    expect(replay).toMatchObject({ ok: true, dedupe: "replayed", callId: first.callId, lines: before + 1 });
    // Same arguments, keys in another order: the identity is over the key-sorted object.
    const reordered = await agentGet<Body>(k(s.m!, "note_append", { line: "once", name: "todo.txt" }));
    expect(reordered).toMatchObject({ dedupe: "replayed", callId: first.callId });
    // Ten concurrent fetches of a new call admit one intent.
    const burst = await Promise.all(
      Array.from({ length: 10 }, () =>
        agentGet<Body>(k(s.m!, "note_append", { name: "todo.txt", line: "burst", tags: ["a"] })),
      ),
    );
    expect(new Set(burst.map((b) => b.callId)).size).toBe(1);
    expect(burst.every((b) => b.ok)).toBe(true);
    expect(lines("todo.txt").filter((l) => l === "once")).toHaveLength(1);
    expect(lines("todo.txt").filter((l) => l === "burst")).toHaveLength(1);
    // run= repeats on purpose.
    const again = await agentGet<Body>(k(s.m!, "note_append", { name: "todo.txt", line: "once" }, [["run", "2"]]));
    expect(again.dedupe).toBeUndefined();
    expect(lines("todo.txt").filter((l) => l === "once")).toHaveLength(2);
    expect(noteAppendOutput.parse(first.ok ? { ok: true, name: first.name, lines: first.lines } : first)).toMatchObject(
      { lines: before + 1 },
    );
    // The activity log names the plugin tool and how the journal answered, never the arguments' content.
    const { body: activity } = await t.api<
      Array<{ route: string; tool: string | null; dedupe?: string | null; params?: unknown }>
    >("GET", `/api/activity?sessionId=${s.sessionId}&limit=200`);
    const appends = activity.filter((a) => a.tool === "notes.note_append");
    expect(appends.length).toBeGreaterThanOrEqual(14);
    expect(appends.every((a) => a.route === "/k")).toBe(true);
    expect(JSON.stringify(appends)).not.toContain("burst");
  });

  it("takes staged JSON arguments (blob=&count=) for read and mutation tools", async () => {
    const json = JSON.stringify({ name: "staged.txt", line: "from a blob ".repeat(20).trim() });
    const half = Math.ceil(json.length / 2);
    for (const [i, chunk] of [json.slice(0, half), json.slice(half)].entries()) {
      expect(
        await agentGet(
          url(
            s.m!,
            "s",
            [
              ["blob", "args1"],
              ["i", i],
              ["count", 2],
            ],
            chunk,
          ),
        ),
      ).toMatchObject({ ok: true });
    }
    const viaBlob = url(s.m!, "k", [
      ["plugin", "notes"],
      ["tool", "note_append"],
      ["blob", "args1"],
      ["count", 2],
    ]);
    expect(await agentGet(viaBlob)).toMatchObject({ ok: true, lines: 1 });
    expect(await agentGet(viaBlob)).toMatchObject({ ok: true, dedupe: "replayed" });
    expect(lines("staged.txt")).toHaveLength(1);
    // The same arguments inline are the same intent: identity is over the arguments, not how they travelled.
    expect(
      await agentGet(
        url(
          s.m!,
          "k",
          [
            ["plugin", "notes"],
            ["tool", "note_append"],
          ],
          json,
        ),
      ),
    ).toMatchObject({ dedupe: "replayed" });
    expect(
      await agentGet(
        url(
          s.m!,
          "s",
          [
            ["blob", "args2"],
            ["i", 0],
            ["count", 1],
          ],
          JSON.stringify({ name: "staged.txt" }),
        ),
      ),
    ).toMatchObject({ ok: true });
    expect(
      await agentGet(
        url(s.r, "k", [
          ["plugin", "notes"],
          ["tool", "note_read"],
          ["blob", "args2"],
          ["count", 1],
        ]),
      ),
    ).toMatchObject({ ok: true, name: "staged.txt" });
    expect(
      await agentGet(
        url(s.r, "k", [
          ["plugin", "notes"],
          ["tool", "note_read"],
          ["blob", "missing"],
          ["count", 1],
        ]),
      ),
    ).toMatchObject({ ok: false, errorCode: "staged_blob_not_found" });
    expect(
      await agentGet(
        url(
          s.m!,
          "k",
          [
            ["plugin", "notes"],
            ["tool", "note_append"],
            ["blob", "args1"],
          ],
          json,
        ),
      ),
    ).toMatchObject({ ok: false, errorCode: "conflicting_parameters" });
  });

  it("answers wrong_capability_base with a repair URL both ways, and the repair works", async () => {
    const onRead = await agentGet<Body>(k(s.r, "note_append", { name: "todo.txt", line: "repaired" }));
    expect(onRead).toMatchObject({ ok: false, errorCode: "wrong_capability_base", errorDetail: { expectedBase: "m" } });
    expect(onRead.repair).toBe(k(s.m!, "note_append", { name: "todo.txt", line: "repaired" }));
    expect(await agentGet(onRead.repair!)).toMatchObject({ ok: true });
    const onMutation = await agentGet<Body>(k(s.m!, "note_read", { name: "todo.txt" }, [["wait", 500]]));
    expect(onMutation).toMatchObject({
      ok: false,
      errorCode: "wrong_capability_base",
      errorDetail: { expectedBase: "r" },
    });
    expect(onMutation.repair).toBe(k(s.r, "note_read", { name: "todo.txt" }));
    expect(await agentGet(onMutation.repair!)).toMatchObject({ ok: true, name: "todo.txt" });
    expect(lines("todo.txt").filter((l) => l === "repaired")).toHaveLength(1);
  });

  it("lets a call narrow its authority to a folder inside the root and refuses any wider authority", async () => {
    const narrowed = await agentGet<Body>(k(s.r, "folder_list", { folder: "sub" }));
    expect(listOutput.parse(narrowed)).toEqual({ ok: true, root: "/project/sub", entries: ["inner.txt"] });
    expect(await agentGet(k(s.r, "folder_list", { folder: "/project/sub" }))).toMatchObject({
      ok: true,
      root: "/project/sub",
    });
    const outside = makeTempDir("outside");
    fs.symlinkSync(outside, path.join(t.projectDir, "leak"));
    for (const folder of ["..", "/etc", "leak", "sub/inner.txt", "absent"]) {
      expect(await agentGet(k(s.r, "folder_list", { folder })), folder).toMatchObject({
        ok: false,
        errorCode: "plugin_authority_exceeded",
        retryable: false,
      });
    }
    // This session has no terminal permission; a plugin asking for it is refused, not granted.
    expect(await agentGet(k(s.r, "shell_probe", {}))).toMatchObject({
      ok: false,
      errorCode: "plugin_authority_exceeded",
      errorDetail: { permission: "terminal" },
    });
  });

  it("keeps a plugin mutation off a session without the permission it declares", async () => {
    const dir = makeTempDir("terminal-only");
    giveToAgent(dir);
    const terminalOnly = await t.session({ write: false, terminal: true, root: dir });
    expect(await agentGet(k(terminalOnly.m!, "note_append", { name: "todo.txt", line: "no" }))).toMatchObject({
      ok: false,
      errorCode: "tool_not_enabled",
    });
    const described = await agentGet<Body & { tools: Array<{ id: string; enabled: boolean; call?: string }> }>(
      `${terminalOnly.r}/k?plugin=notes`,
    );
    expect(described.tools.find((x) => x.id === "note_append")).toMatchObject({ enabled: false });
    expect(described.tools.find((x) => x.id === "note_append")?.call).toBeUndefined();
    // With terminal on, the same probe is allowed.
    expect(await agentGet(k(terminalOnly.r, "shell_probe", {}))).toMatchObject({ ok: true, terminal: true });
  });

  it("replays a finished plugin intent after a bridge restart without executing it again", async () => {
    const stateDir = makeTempDir("plugin-restart-state");
    let bridge = await startTestBridge({}, { plugins: [notesPlugin()], stateDir });
    const project = bridge.projectDir;
    const session = await bridge.session({ write: true });
    const call = (m: string) =>
      url(
        m,
        "k",
        [
          ["plugin", "notes"],
          ["tool", "note_append"],
        ],
        JSON.stringify({ name: "r.txt", line: "kept" }),
      );
    expect(await agentGet(call(session.m!))).toMatchObject({ ok: true, lines: 1 });
    const mPath = new URL(session.m!).pathname;
    await bridge.close();
    bridge = await startTestBridge({}, { plugins: [notesPlugin()], stateDir });
    try {
      const origin = new URL(bridge.bridge.dataUrl).origin;
      expect(await agentGet(call(`${origin}${mPath}`))).toMatchObject({ ok: true, dedupe: "replayed", lines: 1 });
      expect(fs.readFileSync(path.join(project, "notes", "r.txt"), "utf8")).toBe("kept\n");
    } finally {
      await bridge.close();
    }
  });
});
