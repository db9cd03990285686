// MCP tools (issue 12, items 2-3) through the official v2 client over an in-process transport, against a real
// bridge's kernel, journal, store and project folder: listings per capability, each tool's happy path and main
// failures, encodings byte for byte, images, idempotency keys and the activity log.
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as V1InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createActivityRecorder } from "../../../server/edge/activity-recorder.js";
import { createAuthenticator } from "../../../server/gateway/authenticate.js";
import { SessionStates } from "../../../server/kernel/tool/session-state.js";
import { createLogger } from "../../../server/log.js";
import { IDEMPOTENCY_KEY_META } from "../../../server/mcp/call-tool.js";
import { createMcpServer, type McpDeps } from "../../../server/mcp/server.js";
import { MAX_IMAGE_BYTES } from "../../../server/kernel/limits.js";
import { MCP_READ_DEFAULT_LINES } from "../../../server/mcp/tools/read.js";
import { MCP_ANSWER_BUDGET_BYTES } from "../../../server/mcp/tools/spec.js";
import { createPluginHost } from "../../../server/plugins/host.js";
import { encodeText, type TextEncoding } from "../../../server/text/index.js";
import { agentGet, giveToAgent, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { notesPlugin } from "../../helpers/notes-plugin.js";
import { connectMcpClient, tokenOfBase, type McpSdk } from "../../helpers/mcp-clients.js";

let tb: TestBridge;
let deps: McpDeps;
let readOnly: AgentSession;
let full: AgentSession;
let filesOnly: AgentSession;
const clients: Array<{ close(): Promise<void> }> = [];

type Result = Awaited<ReturnType<Client["callTool"]>>;

function tokenOf(base: string | undefined): string {
  return base!.split("/").pop()!;
}

async function connect(base: string | undefined, on: TestBridge = tb, using: McpDeps = deps): Promise<Client> {
  const scope = createAuthenticator(on.bridge.store)(tokenOf(base));
  if (!scope) throw new Error("unknown capability");
  const server = createMcpServer(using, scope);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "tools-test", version: "1.0.0" });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

/** The 2025-era SDK client (what OpenCode 1.18.33 uses): it validates structuredContent against outputSchema, errors included. */
async function connectV1(base: string | undefined): Promise<V1Client> {
  const scope = createAuthenticator(tb.bridge.store)(tokenOf(base))!;
  const server = createMcpServer(deps, scope);
  const [clientSide, serverSide] = V1InMemoryTransport.createLinkedPair();
  // Both lines' in-memory transports carry the same JSON-RPC messages; only their TypeScript types differ.
  await server.connect(serverSide as unknown as Parameters<typeof server.connect>[0]);
  const client = new V1Client({ name: "tools-test-v1", version: "1.0.0" });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

function structured(result: Result): Record<string, unknown> {
  return result.structuredContent as Record<string, unknown>;
}

function text(result: Result): string {
  return (result.content as Array<{ type: string; text?: string }>)
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

function put(name: string, content: string | Buffer): string {
  const file = path.join(tb.projectDir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  giveToAgent(file, false);
  return file;
}

beforeAll(async () => {
  tb = await startTestBridge();
  readOnly = await tb.session();
  full = await tb.session({ write: true, terminal: true });
  filesOnly = await tb.session({ write: true });
  deps = depsOf(tb);
});

function depsOf(bridge: TestBridge, plugins = createPluginHost([])): McpDeps {
  return {
    kernel: bridge.bridge.kernel,
    tools: bridge.bridge.tools,
    plugins,
    states: new SessionStates(),
    publicOrigin: () => bridge.bridge.dataUrl,
    log: createLogger("silent"),
    signal: new AbortController().signal,
    record: createActivityRecorder(bridge.bridge.store.activity),
  };
}

afterAll(async () => {
  for (const c of clients) await c.close();
  await tb.close();
});

describe("tools/list", () => {
  it("lists read tools on the read capability and every enabled tool on the mutation capability (git_commit: worktree sessions only)", async () => {
    const names = async (base: string | undefined) =>
      (await (await connect(base)).listTools()).tools.map((t) => t.name);
    expect(await names(readOnly.r)).toEqual(["read", "outline", "stat", "project", "glob", "grep", "git"]);
    expect(await names(full.r)).toEqual(["read", "outline", "stat", "project", "glob", "grep", "git"]);
    expect(await names(full.m)).toEqual([
      "read",
      "outline",
      "stat",
      "project",
      "glob",
      "grep",
      "git",
      "edit",
      "write",
      "patch",
      "shell",
      "shell_output",
      "shell_stop",
      "shell_input",
      "mutation_result",
      "changes",
      "revert",
    ]);
    expect(await names(filesOnly.m)).toEqual([
      "read",
      "outline",
      "stat",
      "project",
      "glob",
      "grep",
      "git",
      "edit",
      "write",
      "patch",
      "mutation_result",
      "changes",
      "revert",
    ]);
  });

  it("publishes strict input schemas with OpenCode's fields and an object-typed outputSchema for every tool", async () => {
    const { tools } = await (await connect(full.m)).listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    const fields = (name: string) => Object.keys((byName.get(name)!.inputSchema as { properties: object }).properties);
    expect(fields("read")).toEqual(["path", "filePath", "offset", "limit"]);
    expect(fields("glob")).toEqual(["pattern", "path", "hidden", "limit"]);
    expect(fields("grep")).toEqual(["pattern", "path", "include", "caseSensitive", "literal", "limit"]);
    expect(fields("edit")).toEqual(["path", "filePath", "oldString", "newString", "replaceAll", "atLine", "blockHash"]);
    expect(fields("write")).toEqual(["path", "filePath", "content"]);
    expect(fields("patch")).toEqual(["patchText"]);
    expect(fields("shell")).toEqual(["command", "workdir", "timeout", "background", "interactive"]);
    for (const tool of tools) {
      expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
      expect(tool.description!.length, tool.name).toBeGreaterThan(40);
      expect(tool.outputSchema?.type, tool.name).toBe("object");
      for (const [field, schema] of Object.entries(
        (tool.inputSchema as { properties: Record<string, { description?: string }> }).properties,
      )) {
        expect(schema.description, `${tool.name}.${field}`).toBeTruthy();
      }
    }
  });

  it("advertises tools only, without listChanged", async () => {
    const client = await connect(readOnly.r);
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: false } });
    expect(client.getServerCapabilities()?.resources).toBeUndefined();
    expect(client.getServerVersion()?.name).toBe("urlbridge");
    expect(client.getInstructions()).toContain("idempotencyKey");
  });
});

describe("2025-era client", () => {
  it("accepts every tool's successes and failures against the published outputSchema", async () => {
    put("v1.txt", "hello\nworld\n");
    const client = await connectV1(full.m);
    expect((await client.listTools()).tools.length).toBe(17);
    const calls: Array<[string, Record<string, unknown>, boolean]> = [
      ["read", { path: "v1.txt" }, false],
      ["read", { path: "v1-missing.txt" }, true],
      ["glob", { pattern: "*.txt" }, false],
      ["grep", { pattern: "hel" }, false],
      ["stat", { path: "v1.txt" }, false],
      ["outline", { path: "v1.txt" }, true],
      ["project", {}, false],
      // This project folder is no repository; test/integration/kernel/git.test.ts checks git's successes.
      ["git", { op: "status" }, true],
      ["edit", { path: "v1.txt", oldString: "world", newString: "there" }, false],
      ["edit", { path: "v1.txt", oldString: "absent", newString: "x" }, true],
      ["write", { path: "v1-new.txt", content: "x\n" }, false],
      ["patch", { patchText: "*** Begin Patch\n*** Add File: v1-added.txt\n+a\n*** End Patch" }, false],
      ["patch", { patchText: "not a patch" }, true],
      ["shell", { command: "echo hi" }, false],
      ["shell_stop", { pid: 999999 }, true],
      ["shell_input", { pid: 999999, keys: ["enter"] }, true],
      ["mutation_result", { callId: "no-such-call" }, true],
    ];
    for (const [name, args, failing] of calls) {
      const result = await client.callTool({ name, arguments: args });
      expect(Boolean(result.isError), `${name} ${JSON.stringify(args)}`).toBe(failing);
      expect((result.structuredContent as { ok: boolean }).ok, name).toBe(!failing);
    }
  });
});

describe("read tools", () => {
  it("reads numbered lines, paged by offset and limit", async () => {
    put("notes.txt", "alpha\nbeta\ngamma\ndelta\n");
    const client = await connect(readOnly.r);
    const page = await client.callTool({ name: "read", arguments: { path: "notes.txt", offset: 2, limit: 2 } });
    expect(page.isError).toBeFalsy();
    expect(text(page)).toContain("2\tbeta\n3\tgamma");
    expect(text(page)).toContain('call read with {"path":"notes.txt","offset":4,"limit":2}');
    // Codex and Claude Code show their model structuredContent: it carries the numbered lines and the next call.
    expect(structured(page)).toMatchObject({
      ok: true,
      kind: "file",
      startLine: 2,
      endLine: 3,
      totalLines: 4,
      lines: "2\tbeta\n3\tgamma",
    });
    expect(structured(page).next).toEqual({ tool: "read", arguments: { path: "notes.txt", offset: 4, limit: 2 } });
  });

  // Codex shows its model structuredContent and cuts the middle of anything over ~12 KB: each default page, JSON
  // and text, stays within MCP_ANSWER_BUDGET_BYTES, and following next reaches every line exactly once.
  it.each([
    ["short lines", Array.from({ length: 2500 }, (_, i) => `${i + 1}\n`).join("")],
    [
      "wide lines",
      Array.from({ length: 1000 }, (_, i) => `${String(i + 1).padStart(5, "0")} ${"w".repeat(58)}\n`).join(""),
    ],
    [
      "TypeScript source, quotes and all",
      // The MCP server and its tools/call (one file of 22 KB before issue 33 split it): a few pages of real code.
      ["server.ts", "call-tool.ts"]
        .map((file) => fs.readFileSync(new URL(`../../../server/mcp/${file}`, import.meta.url), "utf8"))
        .join(""),
    ],
    ["empty lines", "\n".repeat(3000)],
  ])("pages %s within the answer budget, each next call resuming where the page ended", async (name, content) => {
    const file = `paged-${name.replace(/\W+/g, "-")}.txt`;
    put(file, content);
    const client = await connect(readOnly.r);
    const seen: string[] = [];
    let args: Record<string, unknown> | undefined = { path: file };
    let pages = 0;
    while (args) {
      const result = await client.callTool({ name: "read", arguments: args });
      const page = structured(result);
      pages += 1;
      expect(page.startLine).toBe(seen.length + 1);
      const lines = String(page.lines).split("\n");
      lines.forEach((line, i) => expect(line.slice(0, line.indexOf("\t")).trim()).toBe(String(seen.length + 1 + i)));
      for (const line of lines) seen.push(line.slice(line.indexOf("\t") + 1));
      expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(MCP_ANSWER_BUDGET_BYTES);
      expect(Buffer.byteLength(text(result))).toBeLessThanOrEqual(MCP_ANSWER_BUDGET_BYTES);
      expect(Number(page.endLine) - Number(page.startLine) + 1).toBeLessThanOrEqual(MCP_READ_DEFAULT_LINES);
      args = (page.next as { tool: string; arguments: Record<string, unknown> } | undefined)?.arguments;
      if (args) expect(text(result)).toContain(`call read with ${JSON.stringify(args)}`);
    }
    expect(`${seen.join("\n")}\n`).toBe(content);
    expect(pages).toBeGreaterThan(1);
  });

  it("keeps the caller's limit in the next call", async () => {
    put("limited.txt", Array.from({ length: 30 }, (_, i) => `line ${i + 1}\n`).join(""));
    const page = structured(
      await (
        await connect(readOnly.r)
      ).callTool({ name: "read", arguments: { path: "limited.txt", offset: 5, limit: 10 } }),
    );
    expect(page).toMatchObject({
      startLine: 5,
      endLine: 14,
      next: { tool: "read", arguments: { path: "limited.txt", offset: 15, limit: 10 } },
    });
  });

  it("answers a missing file as a structured error", async () => {
    const result = await (await connect(readOnly.r)).callTool({ name: "read", arguments: { path: "missing.txt" } });
    expect(result.isError).toBe(true);
    expect(structured(result)).toMatchObject({
      ok: false,
      errorCode: "path_not_found",
      agentAction: expect.any(String),
    });
    expect(typeof structured(result).repairHint).toBe("string");
    expect(text(result)).toContain("path_not_found");
  });

  it("refuses a path outside the project", async () => {
    const result = await (
      await connect(readOnly.r)
    ).callTool({ name: "read", arguments: { path: "../../etc/passwd" } });
    expect(result.isError).toBe(true);
    expect(structured(result).errorCode).toBe("path_outside_root");
  });

  it("returns a PNG as image content and other binary files as a description only", async () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(24, 0)]);
    put("pixel.png", png);
    put("blob.bin", Buffer.from([0, 1, 2, 3, 0, 255]));
    const client = await connect(readOnly.r);
    const image = await client.callTool({ name: "read", arguments: { path: "pixel.png" } });
    const block = (image.content as Array<{ type: string; data?: string; mimeType?: string }>).find(
      (c) => c.type === "image",
    );
    expect(block).toMatchObject({ mimeType: "image/png", data: png.toString("base64") });
    const binary = await client.callTool({ name: "read", arguments: { path: "blob.bin" } });
    expect((binary.content as Array<{ type: string }>).map((c) => c.type)).toEqual(["text"]);
    expect(text(binary)).toContain("binary file");
    expect(structured(binary)).toMatchObject({ kind: "binary" });
  });

  it.each([
    ["photo.jpg", "image/jpeg", Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46])],
    ["anim.gif", "image/gif", Buffer.concat([Buffer.from("GIF89a"), Buffer.from([0x01, 0x00, 0x01, 0x00, 0x80])])],
    [
      "still.webp",
      "image/webp",
      Buffer.concat([Buffer.from("RIFF"), Buffer.from([0x1a, 0x00, 0x00, 0x00]), Buffer.from("WEBPVP8 ")]),
    ],
    ["no-nul.jpg", "image/jpeg", Buffer.from([0xff, 0xd8, 0xff, 0xdb, 0x43, 0x11, 0x22])],
  ])("returns %s as %s image content, judged by its signature", async (name, mimeType, bytes) => {
    put(name, bytes);
    const result = await (await connect(readOnly.r)).callTool({ name: "read", arguments: { path: name } });
    const block = (result.content as Array<{ type: string; data?: string; mimeType?: string }>).find(
      (c) => c.type === "image",
    );
    expect(block).toMatchObject({ mimeType, data: bytes.toString("base64") });
  });

  it("describes an image over the size bound instead of returning it", async () => {
    const header = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    put("huge.png", Buffer.concat([header, Buffer.alloc(MAX_IMAGE_BYTES, 0)]));
    const result = await (await connect(readOnly.r)).callTool({ name: "read", arguments: { path: "huge.png" } });
    expect((result.content as Array<{ type: string }>).map((c) => c.type)).toEqual(["text"]);
    expect(text(result)).toContain(`over the ${MAX_IMAGE_BYTES}-byte limit`);
  });

  it("describes a file named .png that is not one without image content", async () => {
    put("fake.png", Buffer.from([0x00, 0x01, 0x02, 0x03]));
    const result = await (await connect(readOnly.r)).callTool({ name: "read", arguments: { path: "fake.png" } });
    expect((result.content as Array<{ type: string }>).map((c) => c.type)).toEqual(["text"]);
  });

  it("lists a directory, stats a path, outlines a TS file and describes the project", async () => {
    put("src/app.ts", "export function hello(): string {\n  return 'hi';\n}\n");
    const client = await connect(readOnly.r);
    expect(text(await client.callTool({ name: "read", arguments: { path: "src" } }))).toContain("app.ts");
    expect(structured(await client.callTool({ name: "stat", arguments: { path: "src/app.ts" } }))).toMatchObject({
      ok: true,
      exists: true,
      kind: "file",
    });
    expect(text(await client.callTool({ name: "outline", arguments: { path: "src/app.ts" } }))).toContain("hello");
    expect(structured(await client.callTool({ name: "project", arguments: {} }))).toMatchObject({
      ok: true,
      root: "/project",
    });
  });

  it("globs files and greps with OpenCode's regex, literal and case flags", async () => {
    put("src/one.ts", "const Value = 1;\n");
    put("src/two.js", "value(a.b)\n");
    const client = await connect(readOnly.r);
    const globbed = await client.callTool({ name: "glob", arguments: { pattern: "*.ts", path: "src" } });
    expect(text(globbed)).toContain("/project/src/one.ts");
    expect(text(globbed)).not.toContain("two.js");
    put("node_modules/dep/index.ts", "export {};\n");
    expect(text(await client.callTool({ name: "glob", arguments: { pattern: "index.ts" } }))).toContain(
      "set hidden: true",
    );
    expect(text(await client.callTool({ name: "glob", arguments: { pattern: "index.ts", hidden: true } }))).toContain(
      "/project/node_modules/dep/index.ts",
    );
    const regex = await client.callTool({ name: "grep", arguments: { pattern: "Val.e" } });
    expect(text(regex)).toContain("/project/src/one.ts:1: const Value = 1;");
    const literal = await client.callTool({ name: "grep", arguments: { pattern: "a.b", literal: true } });
    expect(text(literal)).toContain("two.js:1:");
    const insensitive = await client.callTool({
      name: "grep",
      arguments: { pattern: "value", caseSensitive: false, include: "*.ts" },
    });
    expect(text(insensitive)).toContain("one.ts:1:");
    const invalid = await client.callTool({ name: "grep", arguments: { pattern: "(" } });
    expect(invalid.isError).toBe(true);
    expect(structured(invalid).errorCode).toBe("invalid_regex");
  });
});

describe("file tools", () => {
  it("edits one occurrence with a compact diff, refuses ambiguity unless replaceAll", async () => {
    put("edit-me.ts", "let a = 1;\nlet b = 1;\nlet c = 2;\n");
    const client = await connect(full.m);
    const ambiguous = await client.callTool({
      name: "edit",
      arguments: { path: "edit-me.ts", oldString: "= 1;", newString: "= 3;" },
    });
    expect(ambiguous.isError).toBe(true);
    expect(structured(ambiguous).errorCode).toBe("edit_ambiguous");
    expect(fs.readFileSync(path.join(tb.projectDir, "edit-me.ts"), "utf8")).toBe(
      "let a = 1;\nlet b = 1;\nlet c = 2;\n",
    );

    const single = await client.callTool({
      name: "edit",
      arguments: { path: "edit-me.ts", oldString: "let c = 2;", newString: "let c = 5;" },
    });
    expect(single.isError).toBeFalsy();
    expect(structured(single)).toMatchObject({ ok: true, state: "succeeded", line: 3 });
    expect(text(single)).toContain("-let c = 2;\n+let c = 5;");

    const all = await client.callTool({
      name: "edit",
      arguments: { path: "edit-me.ts", oldString: "= 1;", newString: "= 3;", replaceAll: true },
    });
    expect(all.isError).toBeFalsy();
    expect(text(all)).toContain("Replaced 2 occurrences");
    expect(fs.readFileSync(path.join(tb.projectDir, "edit-me.ts"), "utf8")).toBe(
      "let a = 3;\nlet b = 3;\nlet c = 5;\n",
    );

    const none = await client.callTool({
      name: "edit",
      arguments: { path: "edit-me.ts", oldString: "nowhere", newString: "x" },
    });
    expect(structured(none).errorCode).toBe("edit_no_match");
  });

  it("keeps a UTF-8 BOM and CRLF newlines byte for byte through edit and patch", async () => {
    const original = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("one\r\ntwo\r\nthree\r\n")]);
    const file = put("bom-crlf.txt", original);
    const client = await connect(full.m);
    const edited = await client.callTool({
      name: "edit",
      arguments: { path: "bom-crlf.txt", oldString: "two\nthree", newString: "TWO\nTHREE" },
    });
    expect(edited.isError).toBeFalsy();
    expect(fs.readFileSync(file)).toEqual(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("one\r\nTWO\r\nTHREE\r\n")]),
    );
    const patchText = "*** Begin Patch\n*** Update File: bom-crlf.txt\n@@\n one\n-TWO\n+two again\n*** End Patch";
    const patched = await client.callTool({ name: "patch", arguments: { patchText } });
    expect(patched.isError).toBeFalsy();
    expect(fs.readFileSync(file)).toEqual(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("one\r\ntwo again\r\nTHREE\r\n")]),
    );
    // The kernel's diff (newlines as \n, BOM not shown), in the text as in structuredContent.
    const diff = [
      "--- /project/bom-crlf.txt",
      "+++ /project/bom-crlf.txt",
      "@@ -1,3 +1,3 @@",
      " one",
      "-TWO",
      "+two again",
      " THREE",
    ].join("\n");
    expect(structured(patched).diff).toBe(diff);
    expect(text(patched)).toContain(diff);
    const all = await client.callTool({
      name: "edit",
      arguments: { path: "bom-crlf.txt", oldString: "e\n", newString: "E\n", replaceAll: true },
    });
    expect(all.isError).toBeFalsy();
    expect(fs.readFileSync(file)).toEqual(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("onE\r\ntwo again\r\nTHREE\r\n")]),
    );
  });

  it("replaces every occurrence in a file with mixed newlines, keeping each line's own newline", async () => {
    const mixed = put("mixed.txt", "a;\r\nb;\nc;\n");
    const result = await (
      await connect(full.m)
    ).callTool({ name: "edit", arguments: { path: "mixed.txt", oldString: ";", newString: ",", replaceAll: true } });
    expect(structured(result)).toMatchObject({ ok: true, occurrences: 3, newline: "mixed" });
    expect(fs.readFileSync(mixed, "utf8")).toBe("a,\r\nb,\nc,\n");
  });

  it("keeps UTF-16 LE with its BOM through edit", async () => {
    const encode = (t: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(t, "utf16le")]);
    const file = put("wide.txt", encode("première\nligne\n"));
    const result = await (
      await connect(full.m)
    ).callTool({ name: "edit", arguments: { path: "wide.txt", oldString: "ligne", newString: "deuxième" } });
    expect(structured(result)).toMatchObject({ ok: true, encoding: "utf-16le" });
    expect(fs.readFileSync(file)).toEqual(encode("première\ndeuxième\n"));
  });

  it.each<[string, TextEncoding]>([
    ["UTF-32 BE with its BOM", "utf-32be"],
    ["BOM-less UTF-16 LE", "utf-16le-no-bom"],
  ])("reads %s as text and keeps it through edit and patch", async (name, encoding) => {
    const rel = `${encoding}.txt`;
    const file = put(rel, encodeText("première\r\nligne\r\n", encoding));
    const client = await connect(full.m);
    const read = await client.callTool({ name: "read", arguments: { path: rel } });
    expect(text(read)).toContain("2\tligne");
    expect(structured(read)).toMatchObject({ ok: true, kind: "file", encoding, newline: "crlf" });
    const edited = await client.callTool({
      name: "edit",
      arguments: { path: rel, oldString: "ligne", newString: "deuxième" },
    });
    expect(structured(edited), name).toMatchObject({ ok: true, encoding });
    const patched = await client.callTool({
      name: "patch",
      arguments: { patchText: `*** Begin Patch\n*** Update File: ${rel}\n@@\n-première\n+first\n*** End Patch` },
    });
    expect(patched.isError).toBeFalsy();
    expect(fs.readFileSync(file)).toEqual(encodeText("first\r\ndeuxième\r\n", encoding));
  });

  it("never rewrites a file that is not valid UTF-8", async () => {
    const latin1 = Buffer.from("caf\xe9 = 1\ncaf\xe9 = 2\n", "latin1");
    const file = put("latin1.txt", latin1);
    const client = await connect(full.m);
    const single = await client.callTool({
      name: "edit",
      arguments: { path: "latin1.txt", oldString: "= 1", newString: "= 9" },
    });
    expect(single.isError).toBe(true);
    const all = await client.callTool({
      name: "edit",
      arguments: { path: "latin1.txt", oldString: " = ", newString: " := ", replaceAll: true },
    });
    expect(all.isError).toBe(true);
    expect(structured(all).errorCode).toBe("unsupported_encoding");
    expect(fs.readFileSync(file)).toEqual(latin1);
  });

  it("changes nothing when a patch fails preflight", async () => {
    const keep = put("keep.txt", "kept\n");
    const patchText = [
      "*** Begin Patch",
      "*** Add File: created.txt",
      "+new",
      "*** Update File: keep.txt",
      "@@",
      "-not there",
      "+x",
      "*** End Patch",
    ].join("\n");
    const result = await (await connect(full.m)).callTool({ name: "patch", arguments: { patchText } });
    expect(result.isError).toBe(true);
    expect(structured(result).errorCode).toBe("patch_hunk_not_found");
    expect(fs.existsSync(path.join(tb.projectDir, "created.txt"))).toBe(false);
    expect(fs.readFileSync(keep, "utf8")).toBe("kept\n");
  });

  it("writes new files and refuses to replace one not read in full", async () => {
    put("existing.txt", "old content\n");
    const client = await connect(full.m);
    const created = await client.callTool({
      name: "write",
      arguments: { path: "new/dir/file.txt", content: "hello\n" },
    });
    expect(structured(created)).toMatchObject({ ok: true, created: true });
    expect(fs.readFileSync(path.join(tb.projectDir, "new/dir/file.txt"), "utf8")).toBe("hello\n");
    const stale = await client.callTool({ name: "write", arguments: { path: "existing.txt", content: "replaced\n" } });
    expect(structured(stale).errorCode).toBe("stale_read");
    await client.callTool({ name: "read", arguments: { path: "existing.txt" } });
    const replaced = await client.callTool({
      name: "write",
      arguments: { path: "existing.txt", content: "replaced\n" },
    });
    expect(structured(replaced)).toMatchObject({ ok: true, created: false });
    // The kernel's diff, in the text as in structuredContent.
    const diff = [
      "--- /project/existing.txt",
      "+++ /project/existing.txt",
      "@@ -1 +1 @@",
      "-old content",
      "+replaced",
    ].join("\n");
    expect(structured(replaced).diff).toBe(diff);
    expect(text(replaced)).toContain(diff);
  });

  it("is not reachable on the read capability, and the mutation tools answer tool_not_enabled without the permission", async () => {
    const client = await connect(readOnly.r);
    const refused = await client
      .callTool({ name: "write", arguments: { path: "x.txt", content: "x" } })
      .catch((error: Error) => error);
    expect(refused instanceof Error || (refused as Result).isError).toBe(true);
    expect(fs.existsSync(path.join(tb.projectDir, "x.txt"))).toBe(false);
  });
});

describe("journal identity", () => {
  it("runs a call with the same idempotency key once, and calls without a key each time", async () => {
    const counter = put("counter.txt", "");
    const client = await connect(full.m);
    const append = (meta?: Record<string, unknown>) =>
      client.callTool({
        name: "shell",
        arguments: { command: "echo x >> counter.txt" },
        ...(meta ? { _meta: meta } : {}),
      });
    const first = await append({ [IDEMPOTENCY_KEY_META]: "key-1" });
    const again = await append({ [IDEMPOTENCY_KEY_META]: "key-1" });
    expect(structured(first)).toMatchObject({ ok: true, callId: "key-1", exitCode: 0 });
    expect(structured(again)).toMatchObject({ ok: true, callId: "key-1", dedupe: "replayed" });
    expect(fs.readFileSync(counter, "utf8")).toBe("x\n");
    await append();
    await append();
    expect(fs.readFileSync(counter, "utf8")).toBe("x\nx\nx\n");
    const polled = await client.callTool({ name: "mutation_result", arguments: { callId: "key-1" } });
    expect(structured(polled)).toMatchObject({
      ok: true,
      callId: "key-1",
      state: "succeeded",
      tool: "terminal",
      exitCode: 0,
    });
    expect(fs.readFileSync(counter, "utf8")).toBe("x\nx\nx\n");
    const bad = await append({ [IDEMPOTENCY_KEY_META]: "has spaces" });
    expect(bad.isError).toBe(true);
    expect(structured(bad).errorCode).toBe("invalid_parameter");
  });

  it("replays a keyed replaceAll edit instead of failing on the changed file", async () => {
    const file = put("replay.txt", "x x x\n");
    const client = await connect(full.m);
    const call = () =>
      client.callTool({
        name: "edit",
        arguments: { path: "replay.txt", oldString: "x", newString: "y", replaceAll: true },
        _meta: { [IDEMPOTENCY_KEY_META]: "edit-key" },
      });
    expect((await call()).isError).toBeFalsy();
    const replay = await call();
    expect(replay.isError).toBeFalsy();
    expect(structured(replay).dedupe).toBe("replayed");
    expect(fs.readFileSync(file, "utf8")).toBe("y y y\n");
    // The same key on another file's replaceAll is a different call: refused, nothing written.
    const other = put("replay-other.txt", "x x\n");
    const reused = await client.callTool({
      name: "edit",
      arguments: { path: "replay-other.txt", oldString: "x", newString: "y", replaceAll: true },
      _meta: { [IDEMPOTENCY_KEY_META]: "edit-key" },
    });
    expect(structured(reused).errorCode).toBe("call_id_conflict");
    expect(fs.readFileSync(other, "utf8")).toBe("x x\n");
  });

  it("replays a keyed call after a bridge restart instead of running it again", async () => {
    const first = await startTestBridge();
    const session = await first.session({ write: true });
    const patchText = "*** Begin Patch\n*** Add File: once.txt\n+once\n*** End Patch";
    const add = (on: TestBridge) =>
      connect(session.m, on, depsOf(on)).then((client) =>
        client.callTool({ name: "patch", arguments: { patchText }, _meta: { [IDEMPOTENCY_KEY_META]: "restart-key" } }),
      );
    expect(structured(await add(first))).toMatchObject({ ok: true, callId: "restart-key" });
    await first.close();
    const second = await startTestBridge({}, { stateDir: first.stateDir });
    try {
      // Without the journal this would be patch_target_exists: once.txt exists now.
      expect(structured(await add(second))).toMatchObject({ ok: true, callId: "restart-key", dedupe: "replayed" });
      expect(fs.readFileSync(path.join(first.projectDir, "once.txt"), "utf8")).toBe("once\n");
    } finally {
      for (const c of clients.splice(0)) await c.close();
      await second.close();
    }
  });

  it("records one activity row per call on route /mcp, without content", async () => {
    const client = await connect(full.m);
    await client.callTool({ name: "write", arguments: { path: "secret-content.txt", content: "TOP-SECRET-VALUE" } });
    tb.bridge.store.activity.flush();
    const rows = tb.bridge.store.activity.list({ sessionId: full.sessionId, limit: 5 });
    const row = rows.find((r) => r.params?.path === "secret-content.txt")!;
    expect(row).toMatchObject({ route: "/mcp", tool: "write", ok: true });
    expect(row.params).toMatchObject({ mcp: "write", content: "<16 bytes>" });
    expect(JSON.stringify(rows)).not.toContain("TOP-SECRET-VALUE");
  });
});

describe("shell", () => {
  it("runs a command in workdir and reports a non-zero exit; rejects timeout with background", async () => {
    put("sub/here.txt", "");
    const client = await connect(full.m);
    const ran = await client.callTool({
      name: "shell",
      arguments: { command: "ls; exit 3", workdir: "sub", timeout: 10_000 },
    });
    expect(structured(ran)).toMatchObject({ ok: true, mode: "foreground", exitCode: 3 });
    expect(text(ran)).toContain("here.txt");
    const conflict = await client.callTool({
      name: "shell",
      arguments: { command: "sleep 1", background: true, timeout: 1000 },
    });
    expect(structured(conflict).errorCode).toBe("conflicting_parameters");
  });
});

describe("over HTTP to the bridge's data plane", () => {
  it.each<McpSdk>(["v1", "v2"])(
    "%s client: shares the session's state with the URL routes and answers structured errors",
    async (sdk) => {
      const file = put(`http-${sdk}.txt`, "from url\n");
      // Read through the URL route: the MCP write below may replace the file only if both share the session's read coverage.
      const page = await agentGet<{ ok: boolean }>(`${full.r}/r?path=http-${sdk}.txt`);
      expect(page.ok).toBe(true);
      const client = await connectMcpClient(tb.bridge.dataUrl, tokenOfBase(full.m!), { sdk, form: "bearer" });
      clients.push(client);
      const replaced = await client.callTool({
        name: "write",
        arguments: { path: `http-${sdk}.txt`, content: "from mcp\n" },
      });
      expect(structured(replaced)).toMatchObject({ ok: true, created: false });
      expect(fs.readFileSync(file, "utf8")).toBe("from mcp\n");
      const failed = await client.callTool({
        name: "edit",
        arguments: { path: `http-${sdk}.txt`, oldString: "absent", newString: "x" },
      });
      expect(failed.isError).toBe(true);
      expect(structured(failed)).toMatchObject({
        ok: false,
        errorCode: "edit_no_match",
        agentAction: "reread_then_retry",
      });
    },
  );
});

describe("plugin tools", () => {
  it("lists a plugin's read tools on the read capability, its mutations with the permission, and runs them through the kernel", async () => {
    const plugins = [notesPlugin()];
    const bridge = await startTestBridge({}, { plugins });
    try {
      const using = depsOf(bridge, createPluginHost(plugins));
      const readSession = await bridge.session();
      const writeSession = await bridge.session({ write: true, root: bridge.projectDir, name: "notes-write" });
      const names = async (base: string | undefined) =>
        (await (await connect(base, bridge, using)).listTools()).tools
          .map((t) => t.name)
          .filter((n) => n.startsWith("notes_"));
      expect(await names(readSession.r)).toEqual(["notes_note_read", "notes_folder_list", "notes_shell_probe"]);
      expect(await names(writeSession.m)).toEqual([
        "notes_note_read",
        "notes_note_append",
        "notes_folder_list",
        "notes_shell_probe",
      ]);
      const client = await connect(writeSession.m, bridge, using);
      const appended = await client.callTool({
        name: "notes_note_append",
        arguments: { name: "todo.txt", line: "buy milk" },
      });
      expect(structured(appended)).toMatchObject({ ok: true, name: "todo.txt", state: "succeeded" });
      const read = await client.callTool({ name: "notes_note_read", arguments: { name: "todo.txt" } });
      expect(structured(read)).toMatchObject({ ok: true, text: expect.stringContaining("buy milk") });
      const refused = await client.callTool({ name: "notes_shell_probe", arguments: {} });
      expect(refused.isError).toBe(true);
      expect(structured(refused).errorCode).toBe("plugin_authority_exceeded");
    } finally {
      for (const c of clients.splice(0)) await c.close();
      await bridge.close();
    }
  });
});
