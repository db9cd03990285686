// OpenCode 1.18.33 (the real binary, URLBRIDGE_OPENCODE_BIN) against the bridge: opencode.json is the exact
// `opencode-remote` snippet the bridge prints, merged with the stand-in chat-completions provider
// (stand-in-model.ts); `opencode run` runs suite.ts's scenario.
import fs from "node:fs";
import path from "node:path";
import { mockProviderConfig } from "../helpers/opencode-process.js";
import { describeRealClient, mergeJson, PROMPT, run, snippetText, type ClientContext } from "./suite.js";

const ENV = "URLBRIDGE_OPENCODE_BIN";

async function runOpencode(context: ClientContext) {
  const bin = process.env[ENV]!;
  const config = mergeJson(
    mockProviderConfig(`${context.model.origin}/v1`),
    JSON.parse(snippetText(context.view, "opencode-remote")) as Record<string, unknown>,
  );
  // `opencode run` cannot ask before a tool runs: the operator's own policy, beside the pasted entry.
  fs.writeFileSync(
    path.join(context.workDir, "opencode.json"),
    JSON.stringify({ ...config, permission: { "*": "allow" } }, null, 2),
  );
  const xdg = (name: string) => path.join(context.home, name);
  const env = {
    ...context.baseEnv,
    HOME: context.home,
    XDG_CONFIG_HOME: xdg(".config"),
    XDG_DATA_HOME: xdg(".local/share"),
    XDG_CACHE_HOME: xdg(".cache"),
    XDG_STATE_HOME: xdg(".local/state"),
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
  };
  return run(bin, ["run", "--format", "json", PROMPT], { cwd: context.workDir, env });
}

describeRealClient("OpenCode 1.18.33 over HTTP (opencode-remote snippet)", ENV, runOpencode);
