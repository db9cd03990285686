// Ready-to-paste MCP client configurations for one session (OpenCode, Claude Code, Cursor, ChatGPT), built in
// one place so the UI's session view and `urlbridge session create` hand out the same text. Pure: no I/O.

export const MCP_HTTP_PATH = "/mcp";
/** Server names are map keys in client configs and prefixes of tool names (`<server>_<tool>`): keep them short. */
const MAX_SERVER_NAME_CHARS = 40;
const FALLBACK_SERVER_NAME = "urlbridge";

export type McpSnippetId = "opencode-remote" | "opencode-local" | "claude-code-remote" | "claude-code-local" | "cursor-remote" | "cursor-local" | "chatgpt";

export interface McpSnippet {
  id: McpSnippetId;
  /** What the operator is looking at, e.g. "OpenCode (opencode.json), remote". */
  title: string;
  /** "json" goes into a config file, "shell" is a command, "url" is pasted into a form. */
  kind: "json" | "shell" | "url";
  text: string;
}

export interface McpSnippetInput {
  /** The key under `mcp` / `mcpServers`, already a safe name (see mcpServerName). */
  serverName: string;
  /** `<public origin>/mcp`: the bearer endpoint. */
  url: string;
  /** `<public origin>/v0/<cap>/mcp`: the capability-in-path endpoint, for clients that cannot send headers. */
  pathUrl: string;
  /** The capability the client should present (mutation when the project allows changes, else read). */
  bearer: string;
  /** argv of the stdio relay, e.g. docker compose exec -T bridge urlbridge mcp --session <name>. */
  stdioCommand: string[];
}

/** A session name as an MCP server name: lower case letters, digits, `-` and `_` only. */
export function mcpServerName(sessionName: string): string {
  const slug = sessionName
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^[-_]+|[-_]+$/g, "")
    .slice(0, MAX_SERVER_NAME_CHARS)
    .replace(/[-_]+$/, "");
  return slug || FALLBACK_SERVER_NAME;
}

/** argv of `urlbridge mcp` for a session: through the compose service when the bridge runs in Docker. */
export function stdioCommandFor(sessionRef: string, inDocker: boolean): string[] {
  const relay = ["urlbridge", "mcp", "--session", sessionRef];
  return inDocker ? ["docker", "compose", "exec", "-T", "bridge", ...relay] : relay;
}

/** POSIX shell quoting, only where a word needs it. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

export function buildMcpSnippets(input: McpSnippetInput): McpSnippet[] {
  const { serverName, url, bearer, stdioCommand } = input;
  const authorization = `Bearer ${bearer}`;
  const [command, ...args] = stdioCommand;
  const schema = "https://opencode.ai/config.json";
  return [
    {
      id: "opencode-remote",
      title: "OpenCode (opencode.json), remote over HTTPS",
      kind: "json",
      text: pretty({
        $schema: schema,
        mcp: { [serverName]: { type: "remote", url, oauth: false, headers: { Authorization: authorization } } },
      }),
    },
    {
      id: "opencode-local",
      title: "OpenCode (opencode.json), local over stdio",
      kind: "json",
      text: pretty({ $schema: schema, mcp: { [serverName]: { type: "local", command: stdioCommand } } }),
    },
    {
      id: "claude-code-remote",
      title: "Claude Code, remote over HTTPS",
      kind: "shell",
      text: ["claude", "mcp", "add", "--transport", "http", serverName, url, "--header", `Authorization: ${authorization}`].map(shellQuote).join(" "),
    },
    {
      id: "claude-code-local",
      title: "Claude Code, local over stdio",
      kind: "shell",
      text: ["claude", "mcp", "add", serverName, "--", ...stdioCommand].map(shellQuote).join(" "),
    },
    {
      id: "cursor-remote",
      title: "Cursor (.cursor/mcp.json), remote over HTTPS",
      kind: "json",
      text: pretty({ mcpServers: { [serverName]: { url, headers: { Authorization: authorization } } } }),
    },
    {
      id: "cursor-local",
      title: "Cursor (.cursor/mcp.json), local over stdio",
      kind: "json",
      text: pretty({ mcpServers: { [serverName]: { command, args } } }),
    },
    {
      id: "chatgpt",
      title: "ChatGPT connector (no authentication; the capability is in the URL)",
      kind: "url",
      text: input.pathUrl,
    },
  ];
}
