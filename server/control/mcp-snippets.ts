// Ready-to-paste MCP client configurations for one session (OpenCode, Claude Code, Codex, Gemini CLI, VS Code,
// Cursor, Claude Desktop, ChatGPT), built in one place so the UI's session view and `urlbridge session create` hand
// out the same text. Each works as printed from any folder: test/real-clients/ configures the real clients with
// this exact text. Pure: no I/O.

export const MCP_HTTP_PATH = "/mcp";
/** Server names are map keys in client configs and prefixes of tool names (`<server>_<tool>`): keep them short. */
const MAX_SERVER_NAME_CHARS = 40;
const FALLBACK_SERVER_NAME = "urlbridge";

export type McpSnippetId =
  | "opencode-remote"
  | "opencode-local"
  | "claude-code-remote"
  | "claude-code-local"
  | "codex-remote"
  | "codex-local"
  | "gemini-remote"
  | "gemini-local"
  | "vscode-remote"
  | "vscode-local"
  | "cursor-remote"
  | "cursor-local"
  | "claude-desktop-local"
  | "chatgpt";

/** The variable Codex reads the bearer from (`bearer_token_env_var`): Codex keeps no secret in config.toml. */
export const CODEX_BEARER_ENV = "URLBRIDGE_MCP_BEARER";

export interface McpSnippet {
  id: McpSnippetId;
  /** What the operator is looking at, e.g. "OpenCode (opencode.json), remote". */
  title: string;
  /** "json" and "toml" go into a config file, "shell" is a command, "url" is pasted into a form. */
  kind: "json" | "toml" | "shell" | "url";
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
  /** argv of the stdio relay (stdioCommandFor). */
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

/** Where the stdio relay runs: in the compose appliance, or on the bridge's host from this package. */
export type RelayPlacement =
  | {
      kind: "docker";
      /** The compose project (URLBRIDGE_COMPOSE_PROJECT): its bridge container is `<project>-bridge-1`. */
      composeProject?: string | undefined;
    }
  | {
      kind: "host";
      /** Absolute path of the Node binary that runs the bridge (MCP clients may start commands with another PATH). */
      node: string;
      /** Absolute path of this package's bin/urlbridge.js (`urlbridge` is not on PATH after npm install). */
      bin: string;
      /** The bridge's state dir (its operator token file and MCP socket), absolute. */
      stateDir: string;
      /** The control plane's URL on this machine. */
      controlUrl: string;
    };

/**
 * argv of `urlbridge mcp` for a session. On the host: absolute paths and flags for everything the relay needs,
 * so it starts from any folder with no environment from the client (Codex passes none to stdio servers, Gemini
 * drops *TOKEN* variables). In Docker: `docker exec` into the bridge's container by name, from any folder; without
 * the compose project's name, through the compose service (from the folder holding compose.yaml).
 */
export function stdioCommandFor(sessionRef: string, placement: RelayPlacement): string[] {
  const relay = ["urlbridge", "mcp", "--session", sessionRef];
  if (placement.kind === "docker" && placement.composeProject)
    return ["docker", "exec", "-i", `${placement.composeProject}-bridge-1`, ...relay];
  if (placement.kind === "docker") return ["docker", "compose", "exec", "-T", "bridge", ...relay];
  return [
    placement.node,
    placement.bin,
    "mcp",
    "--state-dir",
    placement.stateDir,
    "--control-url",
    placement.controlUrl,
    "--session",
    sessionRef,
  ];
}

/** A TOML basic string. */
const tomlString = (value: string) => JSON.stringify(value);
/** A TOML key: bare when it can be (server names are [a-z0-9_-]), else quoted. */
const tomlKey = (key: string) => (/^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key));

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
  // The label says what the URL is: "over HTTPS" only around an https:// URL (issue 32), else "over HTTP (this
  // machine only)" for the local origin of a bridge with no tunnel yet.
  const remote = url.startsWith("https://") ? "remote over HTTPS" : "over HTTP (this machine only)";
  return [
    {
      id: "opencode-remote",
      title: `OpenCode (opencode.json), ${remote}`,
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
      title: `Claude Code, ${remote}`,
      kind: "shell",
      text: [
        "claude",
        "mcp",
        "add",
        "--transport",
        "http",
        serverName,
        url,
        "--header",
        `Authorization: ${authorization}`,
      ]
        .map(shellQuote)
        .join(" "),
    },
    {
      id: "claude-code-local",
      title: "Claude Code, local over stdio",
      kind: "shell",
      text: ["claude", "mcp", "add", serverName, "--", ...stdioCommand].map(shellQuote).join(" "),
    },
    {
      id: "codex-remote",
      title: `Codex (~/.codex/config.toml), ${remote}; start codex with ${CODEX_BEARER_ENV} set`,
      kind: "toml",
      text: [
        `# export ${CODEX_BEARER_ENV}=${shellQuote(bearer)}   (in the shell that starts codex)`,
        `[mcp_servers.${tomlKey(serverName)}]`,
        `url = ${tomlString(url)}`,
        `bearer_token_env_var = ${tomlString(CODEX_BEARER_ENV)}`,
      ].join("\n"),
    },
    {
      id: "codex-local",
      title: "Codex (~/.codex/config.toml), local over stdio",
      kind: "toml",
      text: [
        `[mcp_servers.${tomlKey(serverName)}]`,
        `command = ${tomlString(command!)}`,
        `args = [${args.map(tomlString).join(", ")}]`,
      ].join("\n"),
    },
    {
      id: "gemini-remote",
      title: `Gemini CLI (~/.gemini/settings.json), ${remote}`,
      kind: "json",
      text: pretty({ mcpServers: { [serverName]: { httpUrl: url, headers: { Authorization: authorization } } } }),
    },
    {
      id: "gemini-local",
      title: "Gemini CLI (~/.gemini/settings.json), local over stdio",
      kind: "json",
      text: pretty({ mcpServers: { [serverName]: { command, args } } }),
    },
    {
      id: "vscode-remote",
      title: `VS Code (.vscode/mcp.json), ${remote}`,
      kind: "json",
      text: pretty({ servers: { [serverName]: { type: "http", url, headers: { Authorization: authorization } } } }),
    },
    {
      id: "vscode-local",
      title: "VS Code (.vscode/mcp.json), local over stdio",
      kind: "json",
      text: pretty({ servers: { [serverName]: { type: "stdio", command, args } } }),
    },
    {
      id: "cursor-remote",
      title: `Cursor (.cursor/mcp.json), ${remote}`,
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
      id: "claude-desktop-local",
      title: "Claude Desktop (claude_desktop_config.json), local over stdio",
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
