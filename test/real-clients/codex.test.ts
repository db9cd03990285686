// Codex CLI 0.169.0 (the real binary, URLBRIDGE_CODEX_BIN) against the bridge: config.toml is the stand-in OpenAI
// Responses provider (stand-in-model.ts) plus the exact `codex-remote` table the bridge prints, whose bearer comes
// from the environment variable its first line tells the operator to export; `codex exec` runs suite.ts's scenario.
import fs from "node:fs";
import path from "node:path";
import { describeRealClient, PROMPT, run, snippetText, type ClientContext } from "./suite.js";

const ENV = "URLBRIDGE_CODEX_BIN";

async function runCodex(context: ClientContext) {
  const bin = process.env[ENV]!;
  const codexHome = path.join(context.home, ".codex");
  fs.mkdirSync(codexHome, { recursive: true });
  const snippet = snippetText(context.view, "codex-remote");
  // A model Codex knows (its bundled metadata), as a user's is: with an unknown name it falls back to other defaults
  // (tool offering, output budget) than its users get.
  const provider = [
    'model = "gpt-5.5"',
    'model_provider = "standin"',
    'approval_policy = "never"',
    "[model_providers.standin]",
    'name = "stand-in (test)"',
    `base_url = "${context.model.origin}/v1"`,
    'wire_api = "responses"',
    'env_key = "STANDIN_API_KEY"',
  ].join("\n");
  // codex exec cannot ask before a mutating MCP tool runs: the operator's own policy line, after the pasted table.
  fs.writeFileSync(
    path.join(codexHome, "config.toml"),
    `${provider}\n\n${snippet}\ndefault_tools_approval_mode = "approve"\n`,
  );
  // The snippet's first line is the export to run in the shell that starts codex.
  const exportLine = /^# (export \S+=\S+)/.exec(snippet)?.[1];
  if (!exportLine) return { code: null, output: `the codex-remote snippet names no export line:\n${snippet}` };
  const env = {
    ...context.baseEnv,
    HOME: context.home,
    CODEX_HOME: codexHome,
    STANDIN_API_KEY: "stand-in-key",
    ...(process.env.RUST_LOG ? { RUST_LOG: process.env.RUST_LOG } : {}),
  }; // RUST_LOG=debug: the MCP exchange
  return run("sh", ["-c", `${exportLine}; exec "$0" "$@"`, bin, "exec", "--skip-git-repo-check", PROMPT], {
    cwd: context.workDir,
    env,
  });
}

describeRealClient("Codex CLI 0.169.0 over HTTP (codex-remote snippet)", ENV, runCodex);
