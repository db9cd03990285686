// One real `opencode serve` child for the tests that need one (integration, browser and e2e suites): spawned in
// its own process group on a loopback port, its address parsed from its banner, healthy before it is handed out,
// stopped with SIGTERM then SIGKILL. Every wait is bounded: the first health probe can hang while OpenCode starts
// (../shared/notes/opencode.md), so probes are short and retried.
import { spawn, type ChildProcess } from "node:child_process";

const LISTEN_TIMEOUT_MS = 30_000;
const HEALTH_TIMEOUT_MS = 30_000;
const PROBE_TIMEOUT_MS = 1_500;
const KILL_AFTER_MS = 5_000;

export interface OpencodeProcessOptions {
  bin: string;
  cwd: string;
  /** The whole environment of the child (an isolated HOME, the password...). */
  env: Record<string, string>;
  /** 0 (or absent): a port of the kernel's choosing. */
  port?: number;
  /** The Authorization header the health probe sends, when the server wants a password. */
  authorization?: string;
}

export interface OpencodeProcess {
  url: string;
  /** stdout + stderr so far, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

export async function startOpencodeProcess(options: OpencodeProcessOptions): Promise<OpencodeProcess> {
  const child: ChildProcess = spawn(
    options.bin,
    ["serve", "--hostname", "127.0.0.1", "--port", String(options.port ?? 0)],
    {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
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
    }, KILL_AFTER_MS);
    await exited;
    clearTimeout(timer);
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`opencode serve did not print its address within ${LISTEN_TIMEOUT_MS} ms:\n${text}`)),
        LISTEN_TIMEOUT_MS,
      );
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
    const headers: Record<string, string> = options.authorization ? { authorization: options.authorization } : {};
    const deadline = Date.now() + HEALTH_TIMEOUT_MS;
    for (;;) {
      const healthy = await fetch(`${url}/global/health`, {
        headers,
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (healthy) break;
      if (Date.now() > deadline)
        throw new Error(`opencode serve at ${url} was not healthy within ${HEALTH_TIMEOUT_MS} ms:\n${text}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    return { url, output: () => text, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The Basic auth header OpenCode's server password asks for (user "opencode"). */
export function basicAuth(password: string): string {
  return `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}`;
}

/**
 * An opencode.json whose only provider is a stand-in OpenAI-compatible LLM at `baseURL` (test/e2e/support/mock-llm.ts,
 * test/helpers/mock-provider.ts), with OpenCode's updates and sharing off; `extra` adds fields (permission, mcp).
 */
export function mockProviderConfig(
  baseURL: string,
  apiKey = "mock-key",
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    $schema: "https://opencode.ai/config.json",
    provider: {
      mock: {
        npm: "@ai-sdk/openai-compatible",
        name: "Mock LLM (test stand-in)",
        options: { baseURL, apiKey },
        models: { "mock-model": { name: "Mock Model", tool_call: true, limit: { context: 128000, output: 4096 } } },
      },
    },
    enabled_providers: ["mock"],
    model: "mock/mock-model",
    small_model: "mock/mock-model",
    autoupdate: false,
    share: "disabled",
    ...extra,
  };
}
