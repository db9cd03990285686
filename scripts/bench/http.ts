// HTTP plumbing for benchmarks: the clients (Node's global fetch, as an agent's tooling calls a URL, and a keep-alive
// node:http client), used for a route and for its floors alike, and the floors themselves, servers answering every request with fixed bytes (bare node:http, or behind Koa) or doing a
// durable edit per request.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** What a client names Node's global fetch as, in a suite's text. */
export const FETCH_CLIENT = "Node's global fetch (undici, its default keep-alive pool)";

/** GETs a URL with Node's global fetch, as a client would, and resolves with the whole body; a non-200 throws. */
export async function fetchBody(url: string): Promise<Buffer> {
  const response = await fetch(url);
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(`HTTP ${response.status} from ${url}: ${body.toString("utf8", 0, 200)}`);
  return body;
}

export interface BenchClient {
  /** GETs a URL and resolves with the whole body. */
  get(url: string): Promise<Buffer>;
  close(): void;
}

export function createBenchClient(maxSockets: number): BenchClient {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const get = (url: string, retried = false): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      const request = http.get(url, { agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          response.statusCode === 200
            ? resolve(Buffer.concat(chunks))
            : reject(new Error(`HTTP ${response.statusCode} from ${url}`)),
        );
        response.on("error", reject);
      });
      request.on("error", (error: Error & { code?: string }) => {
        // A server may close an idle keep-alive socket just as the agent reuses it; Node's documented
        // answer (http.ClientRequest reusedSocket) is to send the request again once, on a fresh socket.
        if (request.reusedSocket && error.code === "ECONNRESET" && !retried) {
          process.stderr.write(`bench: GET ${url} met a closed keep-alive socket; sent again\n`);
          resolve(get(url, true));
        } else
          reject(
            new Error(`GET ${url} failed (${error.code ?? error.message}, reused socket: ${request.reusedSocket})`, {
              cause: error,
            }),
          );
      });
    });
  return { get: (url) => get(url), close: () => agent.destroy() };
}

export interface FloorServer {
  url: string;
  /** The floor's process, for its CPU time (harness.ts mainThreadCpuNs). */
  pid: number;
  close(): Promise<void>;
}

const FLOOR_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), "floor-server.mjs");

/**
 * "bare": node:http with no framework, no routing and no work, the least any server can do per request.
 * "koa": the same handler behind a one-middleware Koa app with ctx.respond = false, the data plane's shell.
 */
export type FloorKind = "bare" | "koa";

/** A floor server in its own process, as the bridge runs, so neither shares an event loop with the client. */
export async function startFloorServer(
  body: Buffer,
  contentType: string,
  kind: FloorKind = "bare",
): Promise<FloorServer> {
  const bodyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-bench-floor-")), "body");
  fs.writeFileSync(bodyFile, body);
  const child = spawn(process.execPath, [FLOOR_SCRIPT, bodyFile, contentType, kind], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await firstLine(child);
  return {
    url,
    pid: child.pid!,
    close: async () => {
      await stopChild(child);
      fs.rmSync(path.dirname(bodyFile), { recursive: true, force: true });
    },
  };
}

const EDIT_FLOOR_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), "edit-floor-server.mjs");

/**
 * "plain": a bare node:http server doing the durable edit per GET (read, replace, temp file, fsync, rename,
 * directory fsync), the least any HTTP server can answer a durable edit with. "journaled": the same with one
 * record appended to a log and fsynced beside the temp file's, the least a write-ahead journal adds. "sync": the
 * plain edit with its fsyncs on the event loop, as the in-process floor does them.
 */
export type EditFloorKind = "plain" | "journaled" | "sync";

/** An edit floor server in its own process (edit-floor-server.mjs); GET `${url}?from=..&to=..` edits `file`. */
export async function startEditFloorServer(
  file: string,
  kind: EditFloorKind,
): Promise<{ url: string; close(): Promise<void> }> {
  const child = spawn(process.execPath, [EDIT_FLOOR_SCRIPT, file, kind], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await firstLine(child);
  return { url, close: () => stopChild(child) };
}

/** Resolves with the first line a child prints on stdout. */
export function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const nl = text.indexOf("\n");
      if (nl !== -1) resolve(text.slice(0, nl).trim());
    });
    child.once("exit", (code) => reject(new Error(`bench server exited (${code}) before it listened`)));
  });
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}
