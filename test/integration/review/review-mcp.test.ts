// Review and undo over MCP (issue 30): the same kernel as /c and /n, through the changes and revert tools. A
// session edits, writes and patches; changes lists each call's files with its callId and gives the exact diff;
// revert undoes a call byte for byte, and a retried tools/call with the same idempotency key reverts once.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IDEMPOTENCY_KEY_META } from "../../../server/mcp/call-tool.js";
import { giveToAgent, startTestBridge, type TestBridge } from "../../helpers/bridge.js";
import { connectMcpClient, tokenOfBase, type McpTestClient } from "../../helpers/mcp-clients.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; callId?: string };

const UTF16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("one\r\ntwo\r\n", "utf16le")]);

describe("review and undo over MCP", () => {
  let t: TestBridge;
  let client: McpTestClient;
  const file = (rel: string) => path.join(t.projectDir, rel);
  const call = async (name: string, args: Record<string, unknown>, key?: string) => {
    const result = await client.callTool({
      name,
      arguments: args,
      ...(key ? { _meta: { [IDEMPOTENCY_KEY_META]: key } } : {}),
    });
    const text = (result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("\n");
    return { body: result.structuredContent as Body, text };
  };

  beforeAll(async () => {
    t = await startTestBridge();
    fs.writeFileSync(file("wide.txt"), UTF16);
    giveToAgent(t.projectDir);
    const s = await t.session({ write: true, terminal: true });
    client = await connectMcpClient(t.bridge.dataUrl, tokenOfBase(s.m!), { sdk: "v2" });
  });
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  it("lists changes and diffs, and reverts one call exactly once", async () => {
    const listed = await client.listTools();
    expect(listed.tools.map((x) => x.name)).toEqual(expect.arrayContaining(["changes", "revert"]));
    const edit = await call("edit", { filePath: "wide.txt", oldString: "two", newString: "TWO" });
    expect(edit.body.ok).toBe(true);
    const write = await call("write", { filePath: "made.txt", content: "made\n" });
    expect(write.body.ok).toBe(true);
    const patch = await call("patch", {
      patchText:
        "*** Begin Patch\n*** Update File: made.txt\n*** Move to: moved.txt\n@@\n-made\n+MOVED\n*** End Patch\n",
    });
    expect(patch.body.ok).toBe(true);

    const set = await call("changes", {});
    expect(set.body.ok).toBe(true);
    expect(set.text).toContain(`${String(edit.body.callId)} (edit): modified /project/wide.txt`);
    expect(set.text).toContain(
      `${String(patch.body.callId)} (apply_patch): moved_from /project/made.txt, moved_to /project/moved.txt`,
    );

    const diff = await call("changes", { path: "wide.txt" });
    expect(diff.body).toMatchObject({ ok: true, files: [{ before: { encoding: "utf-16le", newline: "crlf" } }] });
    expect(diff.text).toContain("-two\r\n+TWO\r");

    const key = "undo-edit-1";
    const undone = await call("revert", { callId: edit.body.callId }, key);
    expect(undone.body).toMatchObject({ ok: true, files: [{ path: "/project/wide.txt", op: "restored" }] });
    expect(fs.readFileSync(file("wide.txt")).equals(UTF16)).toBe(true);
    // Changed again by the agent; the retried call answers the recorded revert and writes nothing.
    await call("read", { filePath: "wide.txt" });
    expect((await call("edit", { filePath: "wide.txt", oldString: "one", newString: "ONE" })).body.ok).toBe(true);
    const changed = fs.readFileSync(file("wide.txt"));
    const replayed = await call("revert", { callId: edit.body.callId }, key);
    expect(replayed.body).toMatchObject({ ok: true, callId: undone.body.callId });
    expect(fs.readFileSync(file("wide.txt")).equals(changed)).toBe(true);
    // A fresh revert of the same call now meets the agent's own later edit.
    const refused = await call("revert", { callId: edit.body.callId });
    expect(refused.body).toMatchObject({ ok: false, errorCode: "revert_conflict" });
    const forced = await call("revert", { callId: edit.body.callId, force: true });
    expect(forced.body).toMatchObject({ ok: true, forced: ["/project/wide.txt"] });
    expect(fs.readFileSync(file("wide.txt")).equals(UTF16)).toBe(true);

    const all = await call("revert", { all: true });
    expect(all.body.ok).toBe(true);
    expect(fs.existsSync(file("made.txt"))).toBe(false);
    expect(fs.existsSync(file("moved.txt"))).toBe(false);
  });

  it("lists a shell command's changes under its call, and reverts them", async () => {
    const before = fs.readFileSync(file("wide.txt"));
    const ran = await call("shell", { command: "printf 'x\\n' >> wide.txt && printf 'new\\n' > shell-made.txt" });
    expect(ran.body).toMatchObject({ ok: true, exitCode: 0 });
    const set = await call("changes", {});
    expect(set.text).toContain(`${String(ran.body.callId)} (terminal): `);
    expect(set.text).toMatch(/\(terminal\): .*modified \/project\/wide\.txt/);
    expect(set.text).toMatch(/\(terminal\): .*created \/project\/shell-made\.txt/);
    const undone = await call("revert", { callId: ran.body.callId });
    expect(undone.body.ok).toBe(true);
    expect(fs.readFileSync(file("wide.txt")).equals(before)).toBe(true);
    expect(fs.existsSync(file("shell-made.txt"))).toBe(false);
  });
});
