import { describe, expect, it } from "vitest";
import {
  buildMcpSnippets,
  CODEX_BEARER_ENV,
  mcpServerName,
  shellQuote,
  stdioCommandFor,
  type McpSnippetInput,
  type RelayPlacement,
} from "../../../server/control/mcp-snippets.js";

const HOST: RelayPlacement = {
  kind: "host",
  node: "/usr/bin/node",
  bin: "/opt/urlbridge/bin/urlbridge.js",
  stateDir: "/home/me/.local/state/urlbridge",
  controlUrl: "http://127.0.0.1:47433",
};
const HOST_RELAY = [
  "/usr/bin/node",
  "/opt/urlbridge/bin/urlbridge.js",
  "mcp",
  "--state-dir",
  "/home/me/.local/state/urlbridge",
  "--control-url",
  "http://127.0.0.1:47433",
];

const INPUT: McpSnippetInput = {
  serverName: "demo-1",
  url: "https://words.trycloudflare.com/mcp",
  pathUrl: "https://words.trycloudflare.com/v0/Ab3dEf9h/mcp",
  bearer: "Ab3dEf9h",
  stdioCommand: stdioCommandFor("demo-1", { kind: "docker" }),
};

const snippet = (id: string) => buildMcpSnippets(INPUT).find((s) => s.id === id)!.text;

describe("MCP client snippets", () => {
  it.each([
    ["https://a-b.trycloudflare.com/mcp", "remote over HTTPS"],
    ["http://127.0.0.1:47432/mcp", "over HTTP (this machine only)"],
  ])("labels the snippets for %s as %s, never HTTPS around an http:// URL", (url, words) => {
    const remote = buildMcpSnippets({ ...INPUT, url }).filter((s) => /remote|over HTTP/.test(s.title));
    expect(remote.length).toBeGreaterThanOrEqual(6);
    for (const s of remote) expect(s.title, s.id).toContain(words);
    if (url.startsWith("http:")) for (const s of remote) expect(s.title, s.id).not.toContain("HTTPS");
  });

  it("gives OpenCode 1.18.33's remote shape: mcp.<name>, type remote, the URL, oauth false, the bearer header", () => {
    expect(JSON.parse(snippet("opencode-remote"))).toEqual({
      $schema: "https://opencode.ai/config.json",
      mcp: {
        "demo-1": {
          type: "remote",
          url: "https://words.trycloudflare.com/mcp",
          oauth: false,
          headers: { Authorization: "Bearer Ab3dEf9h" },
        },
      },
    });
  });

  it("gives OpenCode's local shape: the stdio relay through the compose service", () => {
    expect(JSON.parse(snippet("opencode-local")).mcp["demo-1"]).toEqual({
      type: "local",
      command: ["docker", "compose", "exec", "-T", "bridge", "urlbridge", "mcp", "--session", "demo-1"],
    });
  });

  it("gives Claude Code commands and Cursor's mcp.json for both transports", () => {
    expect(snippet("claude-code-remote")).toBe(
      "claude mcp add --transport http demo-1 https://words.trycloudflare.com/mcp --header 'Authorization: Bearer Ab3dEf9h'",
    );
    expect(snippet("claude-code-local")).toBe(
      "claude mcp add demo-1 -- docker compose exec -T bridge urlbridge mcp --session demo-1",
    );
    expect(JSON.parse(snippet("cursor-remote"))).toEqual({
      mcpServers: {
        "demo-1": { url: "https://words.trycloudflare.com/mcp", headers: { Authorization: "Bearer Ab3dEf9h" } },
      },
    });
    expect(JSON.parse(snippet("cursor-local"))).toEqual({
      mcpServers: {
        "demo-1": {
          command: "docker",
          args: ["compose", "exec", "-T", "bridge", "urlbridge", "mcp", "--session", "demo-1"],
        },
      },
    });
  });

  it("gives ChatGPT the capability-in-path URL, since a connector without OAuth sends no header", () => {
    expect(snippet("chatgpt")).toBe("https://words.trycloudflare.com/v0/Ab3dEf9h/mcp");
  });

  it("runs the relay from any folder with no environment when the bridge is not in Docker: absolute node and bin, state dir and control URL as flags", () => {
    expect(stdioCommandFor("demo-1", HOST)).toEqual([...HOST_RELAY, "--session", "demo-1"]);
  });

  it("names the appliance's container when compose says its project, so the local command works from any folder", () => {
    expect(stdioCommandFor("demo-1", { kind: "docker", composeProject: "urlbridge" })).toEqual([
      "docker",
      "exec",
      "-i",
      "urlbridge-bridge-1",
      "urlbridge",
      "mcp",
      "--session",
      "demo-1",
    ]);
    const snippets = buildMcpSnippets({
      ...INPUT,
      stdioCommand: stdioCommandFor("demo-1", { kind: "docker", composeProject: "ub" }),
    });
    expect(snippets.find((s) => s.id === "claude-code-local")!.text).toBe(
      "claude mcp add demo-1 -- docker exec -i ub-bridge-1 urlbridge mcp --session demo-1",
    );
  });

  it("gives Codex a config.toml table whose bearer comes from an environment variable, and the export to set it", () => {
    expect(snippet("codex-remote")).toBe(
      [
        `# export ${CODEX_BEARER_ENV}=Ab3dEf9h   (in the shell that starts codex)`,
        "[mcp_servers.demo-1]",
        'url = "https://words.trycloudflare.com/mcp"',
        `bearer_token_env_var = "${CODEX_BEARER_ENV}"`,
      ].join("\n"),
    );
    const local = buildMcpSnippets({ ...INPUT, stdioCommand: stdioCommandFor("demo-1", HOST) }).find(
      (s) => s.id === "codex-local",
    )!.text;
    expect(local).toBe(
      [
        "[mcp_servers.demo-1]",
        'command = "/usr/bin/node"',
        `args = [${[...HOST_RELAY.slice(1), "--session", "demo-1"].map((a) => JSON.stringify(a)).join(", ")}]`,
      ].join("\n"),
    );
  });

  it("gives Gemini CLI, VS Code and Claude Desktop their config shapes", () => {
    expect(JSON.parse(snippet("gemini-remote"))).toEqual({
      mcpServers: {
        "demo-1": { httpUrl: "https://words.trycloudflare.com/mcp", headers: { Authorization: "Bearer Ab3dEf9h" } },
      },
    });
    expect(JSON.parse(snippet("vscode-remote"))).toEqual({
      servers: {
        "demo-1": {
          type: "http",
          url: "https://words.trycloudflare.com/mcp",
          headers: { Authorization: "Bearer Ab3dEf9h" },
        },
      },
    });
    const relay = {
      command: "docker",
      args: ["compose", "exec", "-T", "bridge", "urlbridge", "mcp", "--session", "demo-1"],
    };
    expect(JSON.parse(snippet("gemini-local"))).toEqual({ mcpServers: { "demo-1": relay } });
    expect(JSON.parse(snippet("vscode-local"))).toEqual({ servers: { "demo-1": { type: "stdio", ...relay } } });
    expect(JSON.parse(snippet("claude-desktop-local"))).toEqual({ mcpServers: { "demo-1": relay } });
  });

  it.each([
    ["demo-1", "demo-1"],
    ["My Project 2", "my-project-2"],
    ["  __weird..name__ ", "weird-name"],
    ["ünïcode", "n-code"],
    ["***", "urlbridge"],
    ["a".repeat(60), "a".repeat(40)],
  ])("turns the session name %j into the server name %j", (name, expected) => {
    expect(mcpServerName(name)).toBe(expected);
  });

  it.each([
    ["demo-1", "demo-1"],
    ["my session", "'my session'"],
    ["it's", `'it'\\''s'`],
    ["Authorization: Bearer x", "'Authorization: Bearer x'"],
  ])("shell-quotes %j as %j", (word, expected) => {
    expect(shellQuote(word)).toBe(expected);
  });

  it("quotes a session name with a space in the Claude Code command", () => {
    const snippets = buildMcpSnippets({ ...INPUT, stdioCommand: stdioCommandFor("my session", HOST) });
    expect(snippets.find((s) => s.id === "claude-code-local")!.text).toBe(
      `claude mcp add demo-1 -- ${HOST_RELAY.join(" ")} --session 'my session'`,
    );
  });
});
