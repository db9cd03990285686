import { describe, expect, it } from "vitest";
import { buildMcpSnippets, mcpServerName, shellQuote, stdioCommandFor, type McpSnippetInput } from "../../../server/control/mcp-snippets.js";

const INPUT: McpSnippetInput = {
  serverName: "demo-1",
  url: "https://words.trycloudflare.com/mcp",
  pathUrl: "https://words.trycloudflare.com/v0/Ab3dEf9h/mcp",
  bearer: "Ab3dEf9h",
  stdioCommand: stdioCommandFor("demo-1", true),
};

const snippet = (id: string) => buildMcpSnippets(INPUT).find((s) => s.id === id)!.text;

describe("MCP client snippets", () => {
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
    expect(snippet("claude-code-local")).toBe("claude mcp add demo-1 -- docker compose exec -T bridge urlbridge mcp --session demo-1");
    expect(JSON.parse(snippet("cursor-remote"))).toEqual({
      mcpServers: { "demo-1": { url: "https://words.trycloudflare.com/mcp", headers: { Authorization: "Bearer Ab3dEf9h" } } },
    });
    expect(JSON.parse(snippet("cursor-local"))).toEqual({
      mcpServers: { "demo-1": { command: "docker", args: ["compose", "exec", "-T", "bridge", "urlbridge", "mcp", "--session", "demo-1"] } },
    });
  });

  it("gives ChatGPT the capability-in-path URL, since a connector without OAuth sends no header", () => {
    expect(snippet("chatgpt")).toBe("https://words.trycloudflare.com/v0/Ab3dEf9h/mcp");
  });

  it("runs the relay directly when the bridge is not in Docker", () => {
    expect(stdioCommandFor("demo-1", false)).toEqual(["urlbridge", "mcp", "--session", "demo-1"]);
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
    const snippets = buildMcpSnippets({ ...INPUT, stdioCommand: stdioCommandFor("my session", false) });
    expect(snippets.find((s) => s.id === "claude-code-local")!.text).toBe("claude mcp add demo-1 -- urlbridge mcp --session 'my session'");
  });
});
