// Claude Code 2.1.328 (the real binary, URLBRIDGE_CLAUDE_BIN) against the bridge, configured by running the exact
// `claude mcp add` command the bridge prints, over HTTP and over the stdio relay, driven by the stand-in Anthropic
// Messages provider (stand-in-model.ts) through suite.ts's scenario.
import fs from "node:fs";
import path from "node:path";
import { describeRealClient, PROMPT, run, snippetText, type ClientContext } from "./suite.js";

const ENV = "URLBRIDGE_CLAUDE_BIN";

async function runClaude(context: ClientContext, snippetId: string) {
  const bin = process.env[ENV]!;
  // The printed command calls `claude`: put the binary on PATH under that name, as an install does.
  const binDir = path.join(context.home, "bin");
  fs.mkdirSync(binDir, { recursive: true });
  fs.symlinkSync(bin, path.join(binDir, "claude"));
  const env: NodeJS.ProcessEnv = {
    ...context.baseEnv,
    PATH: `${binDir}:${context.baseEnv.PATH}`,
    HOME: context.home,
    ANTHROPIC_BASE_URL: context.model.origin,
    ANTHROPIC_API_KEY: "stand-in-key",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
  };
  const add = await run("sh", ["-c", snippetText(context.view, snippetId)], {
    cwd: context.workDir,
    env,
    timeoutMs: 30_000,
  });
  if (add.code !== 0) return { code: add.code, output: `claude mcp add failed:\n${add.output}` };
  return run("claude", ["-p", PROMPT, "--output-format", "json", "--allowedTools", `mcp__${context.view.serverName}`], {
    cwd: context.workDir,
    env,
  });
}

describeRealClient("Claude Code 2.1.328 over HTTP (claude-code-remote snippet)", ENV, (context) =>
  runClaude(context, "claude-code-remote"),
);
describeRealClient("Claude Code 2.1.328 over stdio (claude-code-local snippet)", ENV, (context) =>
  runClaude(context, "claude-code-local"),
);
