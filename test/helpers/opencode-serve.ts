// A real `opencode serve` 1.18.33 for the integration suites of the OpenCode Control plugin: the test-only install
// test/e2e/support/opencode.ts locates (.ci/run puts it there), an isolated HOME whose global config points at the
// stand-in provider (test/helpers/mock-provider.ts), a chosen or random loopback port, an optional password.
// Every wait is bounded; the first health probe can hang while OpenCode starts, so probes are short and retried.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { isolatedEnv } from "../e2e/support/opencode.js";

export { locateOpencode, OPENCODE_VERSION } from "../e2e/support/opencode.js";

const LISTEN_TIMEOUT_MS = 30_000;
const HEALTH_TIMEOUT_MS = 30_000;
const PROBE_TIMEOUT_MS = 1_500;

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
  const config = {
    $schema: "https://opencode.ai/config.json",
    provider: {
      mock: {
        npm: "@ai-sdk/openai-compatible",
        name: "Mock LLM (test stand-in)",
        options: { baseURL: options.providerBaseURL, apiKey: "mock-key" },
        models: { "mock-model": { name: "Mock Model", tool_call: true, limit: { context: 128000, output: 4096 } } },
      },
    },
    enabled_providers: ["mock"],
    model: "mock/mock-model",
    small_model: "mock/mock-model",
    autoupdate: false,
    share: "disabled",
    ...(options.permission ? { permission: options.permission } : {}),
  };
  fs.writeFileSync(path.join(dir, "opencode.json"), JSON.stringify(config, null, 2));
}

export async function startOpencodeServe(options: OpencodeServeOptions): Promise<OpencodeServe> {
  writeConfig(options);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    ...isolatedEnv(options.homeDir),
    ...(options.password ? { OPENCODE_SERVER_PASSWORD: options.password } : {}),
  };
  const child: ChildProcess = spawn(options.bin, ["serve", "--hostname", "127.0.0.1", "--port", String(options.port ?? 0)], {
    cwd: options.cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let text = "";
  child.stdout!.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // Gone already.
      }
    }, 5_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`opencode serve did not print its address within ${LISTEN_TIMEOUT_MS} ms:\n${text}`)), LISTEN_TIMEOUT_MS);
      const check = () => {
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      };
      child.stdout!.on("data", check);
      child.stderr!.on("data", check);
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`opencode serve exited (${code}) before it listened:\n${text}`));
      });
    });
    const headers: Record<string, string> = options.password ? { authorization: `Basic ${Buffer.from(`opencode:${options.password}`).toString("base64")}` } : {};
    const deadline = Date.now() + HEALTH_TIMEOUT_MS;
    for (;;) {
      const healthy = await fetch(`${url}/global/health`, { headers, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (healthy) break;
      if (Date.now() > deadline) throw new Error(`opencode serve at ${url} was not healthy within ${HEALTH_TIMEOUT_MS} ms:\n${text}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    return { url, port: Number(new URL(url).port), output: () => text, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Direct, authenticated calls to OpenCode, for what a test checks behind the plugin's back (user message counts). */
export function opencodeRequest(url: string, password: string | undefined) {
  const headers: Record<string, string> = password ? { authorization: `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}` } : {};
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
