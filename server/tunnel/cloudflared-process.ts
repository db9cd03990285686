// Outside Docker (`npm start` with URLBRIDGE_CLOUDFLARED=1): spawns a cloudflared quick tunnel to the data plane
// and exposes its metrics server for tunnel discovery. Only the process spawned here is ever signalled.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Logger } from "../log.js";

export const CLOUDFLARED_BINARY = "cloudflared";
/** SIGTERM first; cloudflared drains its edge connections, then gets SIGKILL after this. */
const STOP_GRACE_MS = 5_000;

export interface CloudflaredOptions {
  /** The local data-plane origin the tunnel forwards to, e.g. http://127.0.0.1:47432. */
  dataUrl: string;
  log: Logger;
  /** PATH to search; defaults to the process's. */
  searchPath?: string | undefined;
}

export interface CloudflaredProcess {
  pid: number | undefined;
  /** The metrics server of the spawned cloudflared (loopback), for public-origin polling. */
  metricsUrl: string;
  /** Ends the spawned process (if it still runs) and removes the temporary config. */
  stop(): Promise<void>;
}

/** The first executable `name` on the search path, or undefined. */
export function findOnPath(name: string, searchPath: string | undefined = process.env.PATH): string | undefined {
  for (const dir of (searchPath ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here; keep looking.
    }
  }
  return undefined;
}

/** A loopback port free right now (released before cloudflared binds it). */
async function pickLoopbackPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const isRunning = (child: ChildProcess) =>
  child.pid !== undefined && child.exitCode === null && child.signalCode === null;

/**
 * Starts `cloudflared tunnel --url <dataUrl>` with HTTP/2 (QUIC is often blocked on home networks), an empty
 * temporary config (so an operator's ~/.cloudflared/config.yml with named-tunnel ingress rules cannot take
 * over), no auto-update, and metrics on a loopback port. Returns undefined when the binary is not on PATH.
 */
export async function startCloudflaredQuickTunnel(
  options: CloudflaredOptions,
): Promise<CloudflaredProcess | undefined> {
  const { log } = options;
  const binary = findOnPath(CLOUDFLARED_BINARY, options.searchPath ?? process.env.PATH);
  if (!binary) {
    log.warn(
      "URLBRIDGE_CLOUDFLARED=1 but no cloudflared on PATH; no tunnel was started and Init URLs use the local data-plane origin",
    );
    return undefined;
  }
  const port = await pickLoopbackPort();
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-cloudflared-"));
  const configFile = path.join(tempDir, "config.yml");
  fs.writeFileSync(configFile, "", { mode: 0o600 });
  const removeTempDir = () => fs.rmSync(tempDir, { recursive: true, force: true });
  // A crash of the bridge must not leave the temporary folder behind either.
  process.once("exit", removeTempDir);

  const args = [
    "tunnel",
    "--no-autoupdate",
    "--protocol",
    "http2",
    "--config",
    configFile,
    "--metrics",
    `127.0.0.1:${port}`,
    "--url",
    options.dataUrl,
  ];
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"], env: process.env });
  // A failed spawn emits "error" and may never emit "close".
  const exited = new Promise<void>((resolve) => {
    child.once("close", () => resolve());
    child.once("error", () => resolve());
  });
  let stopping = false;
  child.on("error", (error) => log.warn(`cloudflared could not be started: ${error.message}`));
  child.once("exit", (code, signal) => {
    if (!stopping)
      log.warn(`cloudflared exited (${signal ?? `code ${code}`}); the quick tunnel is down until urlbridge restarts`);
  });
  // cloudflared logs to stderr; keep its lines at debug level so the operator can ask for them.
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding("utf8");
    stream?.on("data", (chunk: string) => {
      for (const line of chunk.split("\n")) if (line.trim()) log.debug(`cloudflared: ${line.trim()}`);
    });
  }
  log.info(
    `started cloudflared (pid ${child.pid ?? "?"}) for a quick tunnel to ${options.dataUrl}; metrics on 127.0.0.1:${port}`,
  );

  return {
    pid: child.pid,
    metricsUrl: `http://127.0.0.1:${port}`,
    async stop() {
      if (!stopping) {
        stopping = true;
        // Only our own child, and only while it runs: a stale pid may belong to someone else by now.
        if (isRunning(child)) {
          child.kill("SIGTERM");
          const timer = setTimeout(() => isRunning(child) && child.kill("SIGKILL"), STOP_GRACE_MS);
          await exited;
          clearTimeout(timer);
        }
      }
      process.removeListener("exit", removeTempDir);
      removeTempDir();
    },
  };
}
