// Gemini CLI 0.61.0 (the real program, URLBRIDGE_GEMINI_BIN, run by this Node) against the bridge: settings.json is
// the exact `gemini-remote` snippet the bridge prints, merged with the stand-in Gemini provider's auth setting
// (stand-in-model.ts); `gemini -p` runs suite.ts's scenario.
import fs from "node:fs";
import path from "node:path";
import { describeRealClient, mergeJson, PROMPT, run, snippetText, type ClientContext } from "./suite.js";

const ENV = "URLBRIDGE_GEMINI_BIN";

async function runGemini(context: ClientContext) {
  const bin = process.env[ENV]!;
  const settingsDir = path.join(context.home, ".gemini");
  fs.mkdirSync(settingsDir, { recursive: true });
  const settings = mergeJson(
    { security: { auth: { selectedType: "gemini-api-key" } } },
    JSON.parse(snippetText(context.view, "gemini-remote")) as Record<string, unknown>,
  );
  fs.writeFileSync(path.join(settingsDir, "settings.json"), JSON.stringify(settings, null, 2));
  const env = {
    ...context.baseEnv,
    HOME: context.home,
    GOOGLE_GEMINI_BASE_URL: context.model.origin,
    GEMINI_API_KEY: "stand-in-key",
    // Otherwise MCP servers stay disabled in a folder the user has not trusted.
    GEMINI_CLI_TRUST_WORKSPACE: "true",
  };
  return run(process.execPath, [bin, "-p", PROMPT, "--output-format", "json", "--approval-mode", "yolo"], {
    cwd: context.workDir,
    env,
  });
}

describeRealClient("Gemini CLI 0.61.0 over HTTP (gemini-remote snippet)", ENV, runGemini);
