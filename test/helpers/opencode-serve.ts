// A real `opencode serve` 1.18.33 for the integration suites of the OpenCode Control plugin: the test-only install
// test/e2e/support/opencode.ts locates (.ci/run puts it there), an isolated HOME whose global config points at the
// stand-in provider (test/helpers/mock-provider.ts), a chosen or random loopback port, an optional password.
// Every wait is bounded; the first health probe can hang while OpenCode starts, so probes are short and retried.
import fs from "node:fs";
import path from "node:path";
import { isolatedEnv } from "../e2e/support/opencode.js";
import { basicAuth, mockProviderConfig, startOpencodeProcess } from "./opencode-process.js";

export { locateOpencode, OPENCODE_VERSION } from "../e2e/support/opencode.js";

export interface OpencodeServeOptions {
  bin: string;
  homeDir: string;
  /** Where `opencode serve` runs (its default directory). */
  cwd: string;
  providerBaseURL: string;
  port?: number;
  password?: string;
  /** OpenCode permission config (e.g. { bash: "ask" }). */
  permission?: Record<string, string>;
}

export interface OpencodeServe {
  url: string;
  port: number;
  output(): string;
  stop(): Promise<void>;
}

/** The global config of the isolated home: the stand-in provider only, nothing fetched. */
function writeConfig(options: OpencodeServeOptions): void {
  const dir = path.join(options.homeDir, ".config", "opencode");
  fs.mkdirSync(dir, { recursive: true });
  const config = mockProviderConfig(
    options.providerBaseURL,
    "mock-key",
    options.permission ? { permission: options.permission } : {},
  );
  fs.writeFileSync(path.join(dir, "opencode.json"), JSON.stringify(config, null, 2));
}

export async function startOpencodeServe(options: OpencodeServeOptions): Promise<OpencodeServe> {
  writeConfig(options);
  const started = await startOpencodeProcess({
    bin: options.bin,
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      ...isolatedEnv(options.homeDir),
      ...(options.password ? { OPENCODE_SERVER_PASSWORD: options.password } : {}),
    },
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.password ? { authorization: basicAuth(options.password) } : {}),
  });
  return { ...started, port: Number(new URL(started.url).port) };
}

/** Direct, authenticated calls to OpenCode, for what a test checks behind the plugin's back (user message counts). */
export function opencodeRequest(url: string, password: string | undefined) {
  const headers: Record<string, string> = password ? { authorization: basicAuth(password) } : {};
  return async <T>(method: string, route: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const raw = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: HTTP ${res.status} ${raw.slice(0, 300)}`);
    return (raw ? JSON.parse(raw) : undefined) as T;
  };
}
