// A real `opencode serve` (opencode-ai 1.18.33) for tests: a test-only install outside the repo (`.ci/run` puts it
// there), started in an isolated HOME/XDG tree with OpenCode's downloads and defaults switched off, on a loopback
// port parsed from its banner, behind Basic auth (the child itself: test/helpers/opencode-process.ts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { basicAuth, startOpencodeProcess } from "../../helpers/opencode-process.js";

export const OPENCODE_VERSION = "1.18.33";
/** Where `.ci/run` installs opencode-ai; URLBRIDGE_OPENCODE_BIN overrides it. */
export const OPENCODE_CACHE_DIR = path.join(
  process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"),
  "urlbridge-test",
  `opencode-ai-${OPENCODE_VERSION}`,
);
/** The platform package holds the binary (opencode-ai itself only links it in a postinstall, which the install skips). */
const DEFAULT_BIN = path.join(OPENCODE_CACHE_DIR, "node_modules", `opencode-linux-${process.arch}`, "bin", "opencode");

const PASSWORD = "urlbridge-e2e-opencode-0123456789";

/** The binary, or a sentence saying why there is none and how to get it. */
export function locateOpencode(): { bin: string } | { missing: string } {
  const explicit = process.env.URLBRIDGE_OPENCODE_BIN;
  const bin = explicit || DEFAULT_BIN;
  if (fs.existsSync(bin)) return { bin };
  return {
    missing:
      `the OpenCode binary is missing at ${bin}${explicit ? " (URLBRIDGE_OPENCODE_BIN)" : ""}: install it with ` +
      `\`npm install --prefix ${OPENCODE_CACHE_DIR} --no-save --ignore-scripts --omit=optional opencode-ai@${OPENCODE_VERSION} opencode-linux-${process.arch}@${OPENCODE_VERSION}\` (.ci/run does) or set URLBRIDGE_OPENCODE_BIN`,
  };
}

export interface Opencode {
  url: string;
  /** fetch against the server with its Basic auth, bounded by timeoutMs. */
  request<T = unknown>(
    method: string,
    route: string,
    body?: unknown,
    timeoutMs?: number,
  ): Promise<{ status: number; body: T }>;
  /** stdout + stderr so far, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

export interface OpencodeOptions {
  bin: string;
  /** The project directory; its opencode.json is the config. */
  projectDir: string;
  /** A fresh directory for HOME and the XDG dirs. */
  homeDir: string;
  env?: Record<string, string>;
}

export function isolatedEnv(homeDir: string): Record<string, string> {
  return {
    HOME: homeDir,
    XDG_CONFIG_HOME: path.join(homeDir, ".config"),
    XDG_DATA_HOME: path.join(homeDir, ".local", "share"),
    XDG_CACHE_HOME: path.join(homeDir, ".cache"),
    XDG_STATE_HOME: path.join(homeDir, ".local", "state"),
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
  };
}

export async function startOpencode(options: OpencodeOptions): Promise<Opencode> {
  const authorization = basicAuth(PASSWORD);
  const started = await startOpencodeProcess({
    bin: options.bin,
    cwd: options.projectDir,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      ...isolatedEnv(options.homeDir),
      OPENCODE_SERVER_PASSWORD: PASSWORD,
      ...options.env,
    },
    authorization,
  });
  const request = async <T>(method: string, route: string, body?: unknown, timeoutMs = 10_000) => {
    const res = await fetch(`${started.url}${route}`, {
      method,
      headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const raw = await res.text();
    let parsed: unknown = raw;
    try {
      parsed = raw ? JSON.parse(raw) : undefined;
    } catch {
      // Not JSON: keep the text for the failure message.
    }
    return { status: res.status, body: parsed as T };
  };
  return { ...started, request };
}
