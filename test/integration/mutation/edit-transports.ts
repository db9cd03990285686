// One face over both transports for the file tools, so a table of agent steps runs the same way over URL GETs
// (a real bridge on port 0) and over MCP (the official v2 client over HTTP to the same bridge). Each face
// takes OpenCode's field names (filePath, oldString, newString, replaceAll) and answers the kernel's body;
// MCP answers also carry the text the model reads.
import path from "node:path";
import { IDEMPOTENCY_KEY_META as IDEMPOTENCY_KEY } from "../../../server/mcp/call-tool.js";
import { connectMcpClient, tokenOfBase, type McpTestClient } from "../../helpers/mcp-clients.js";
import { agentGet, giveToAgent, type AgentSession, type TestBridge, mkdirAsAgent } from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

export type Body = Record<string, unknown> & { ok: boolean; errorCode?: string };
export interface Answer {
  body: Body;
  /** What the model reads: MCP's text content; over URLs the JSON body itself. */
  text: string;
}

export interface EditArgs {
  filePath: string;
  oldString: string;
  newString: string;
  replaceAll?: boolean;
  /** An idempotency key: URL call=, MCP _meta. */
  key?: string;
}

export interface Transport {
  name: "url" | "mcp";
  /** The project folder this transport's session works in. */
  root: string;
  /** The session's capability bases (read, mutation). */
  bases: { r: string; m: string | undefined };
  edit(args: EditArgs): Promise<Answer>;
  write(args: { filePath: string; content: string }): Promise<Answer>;
  read(args: { filePath: string; offset?: number; limit?: number }): Promise<Answer>;
  /** Paths (as /project/...) a glob lists, in its order. */
  glob(pattern: string): Promise<string[]>;
  close(): Promise<void>;
}

/** A session of its own (own read coverage, own folder) for each transport, on one bridge. */
export async function openTransport(tb: TestBridge, name: "url" | "mcp"): Promise<Transport> {
  const root = path.join(tb.projectDir, name);
  mkdirAsAgent(root, { recursive: true });
  giveToAgent(root);
  const session = await tb.session({ write: true, root, name: `edit-${name}` });
  const transport = name === "url" ? urlTransport(session, root) : await mcpTransport(tb, session, root);
  return { ...transport, bases: { r: session.r, m: session.m } };
}

function urlTransport(s: AgentSession, root: string): Omit<Transport, "bases"> {
  const json = async (u: string): Promise<Answer> => {
    const body = await agentGet<Body>(u);
    return { body, text: JSON.stringify(body) };
  };
  return {
    name: "url",
    root,
    edit: ({ filePath, oldString, newString, replaceAll, key }) =>
      json(
        url(
          s.m!,
          "e",
          [
            ["filePath", filePath],
            ["oldString", oldString],
            ...(replaceAll ? [["replaceAll", 1] as [string, number]] : []),
            ...(key ? [["call", key] as [string, string]] : []),
          ],
          newString,
        ),
      ),
    write: ({ filePath, content }) => json(url(s.m!, "w", [["filePath", filePath]], content)),
    read: ({ filePath, offset, limit }) =>
      json(
        url(s.r, "r", [
          ["filePath", filePath],
          ...(offset ? [["offset", offset] as [string, number]] : []),
          ...(limit ? [["limit", limit] as [string, number]] : []),
        ]),
      ),
    async glob(pattern) {
      const body = await agentGet<{ results: Array<{ path: string }> }>(
        url(s.r, "f", [
          ["include", pattern],
          ["sort", "mtime"],
        ]),
      );
      return body.results.map((r) => r.path);
    },
    close: async () => {},
  };
}

async function mcpTransport(tb: TestBridge, s: AgentSession, root: string): Promise<Omit<Transport, "bases">> {
  const client: McpTestClient = await connectMcpClient(tb.bridge.dataUrl, tokenOfBase(s.m!), { sdk: "v2" });
  const call = async (name: string, args: Record<string, unknown>, key?: string): Promise<Answer> => {
    const result = await client.callTool({
      name,
      arguments: args,
      ...(key ? { _meta: { [IDEMPOTENCY_KEY]: key } } : {}),
    });
    const text = (result.content as Array<{ type: string; text?: string }>)
      .filter((c) => c.type === "text")
      .map((c) => c.text)
      .join("\n");
    return { body: result.structuredContent as Body, text };
  };
  return {
    name: "mcp",
    root,
    edit: ({ key, ...args }) => call("edit", args, key),
    // Fields beyond filePath/content pass through as given (a test may add path too).
    write: (args) => call("write", args),
    read: (args) => call("read", args),
    async glob(pattern) {
      const { body } = await call("glob", { pattern });
      return (body.results as Array<{ path: string }>).map((r) => r.path);
    },
    close: () => client.close(),
  };
}
