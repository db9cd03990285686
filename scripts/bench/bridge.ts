// A real bridge for a benchmark, run the way it is deployed: the built server (`node dist/server/main.js`,
// what `npm start` runs) in its own process, with a temp state dir, one project and one session.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stopChild } from "./http.js";

export const OPERATOR_TOKEN = "bench-operator-token-0123456789";
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SERVER_ENTRY = path.join(REPO_ROOT, "dist", "server", "main.js");
const LISTEN_LINE = /(control|data) plane on (http:\/\/\S+)/;
const START_TIMEOUT_MS = 20_000;

export interface BenchBridge {
  bases: { r: string; m?: string };
  /** The bridge's process, for its CPU time (harness.ts mainThreadCpuNs). */
  pid: number;
  /** The control plane's base URL (createControlPost) and the bench project, for suites that add sessions. */
  control: string;
  projectId: string;
  close(): Promise<void>;
}

/** The uid terminal commands run as when the bridge runs as root (server/sandbox/identity.ts). */
const AGENT_UID = 1000;

/**
 * Granting write or terminal needs a root those identities can write (the control plane probes it,
 * server/control/writability.ts): as root, the bench gives its temp project to the agent's uid, as an operator would.
 */
export function giveToAgent(root: string): void {
  if (process.getuid?.() !== 0) return;
  const walk = (p: string) => {
    fs.lchownSync(p, AGENT_UID, AGENT_UID);
    if (fs.lstatSync(p).isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
  };
  fs.chmodSync(root, 0o755);
  walk(root);
}

export function makeBenchDir(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `urlbridge-bench-${prefix}-`)));
}

export interface BenchBridgeOptions {
  permissions?: { write: boolean; terminal: boolean };
  env?: Record<string, string>;
}

/** Starts the built server on free ports and learns its URLs from the two "plane on" log lines. */
/** Starts a built server (`entry`: this checkout's dist/server/main.js unless another build's is named). */
export function spawnServer(
  stateDir: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  entry = SERVER_ENTRY,
) {
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build:server\` (npm run bench does)`);
  const child = spawn(process.execPath, [...nodeArgs, entry], {
    env: {
      ...process.env,
      URLBRIDGE_STATE_DIR: stateDir,
      URLBRIDGE_CONTROL_PORT: "0",
      URLBRIDGE_DATA_PORT: "0",
      URLBRIDGE_OPERATOR_TOKEN: OPERATOR_TOKEN,
      URLBRIDGE_LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const urls = new Promise<{ control: string; data: string }>((resolve, reject) => {
    const found: Record<string, string> = {};
    let text = "";
    const timer = setTimeout(
      () => reject(new Error(`the bridge did not listen within ${START_TIMEOUT_MS} ms:\n${text}`)),
      START_TIMEOUT_MS,
    );
    child.stderr.on("data", (chunk: Buffer) => {
      if (found.control && found.data) return;
      text += chunk.toString("utf8");
      for (const line of text.split("\n")) {
        const m = LISTEN_LINE.exec(line);
        if (m) found[m[1]!] = m[2]!;
      }
      if (found.control && found.data) {
        clearTimeout(timer);
        resolve({ control: found.control, data: found.data });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the bridge exited (${code}) before it listened:\n${text}`));
    });
  });
  return { child, urls };
}

/** POSTs JSON to the control API with the operator token; anything but 201 Created throws with the answer. */
export function createControlPost(control: string) {
  return async (route: string, body: unknown): Promise<Record<string, string>> => {
    const res = await fetch(`${control}${route}`, {
      method: "POST",
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`${route} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  };
}

/**
 * A build (its dist/server/main.js) started on a fresh state directory for an A/B script, with one session on
 * projectDir; PROF=DIR profiles it (--cpu-prof into DIR/n). Returns the child and the session's bases.
 */
export async function startBuildSession(
  entry: string,
  n: number,
  projectDir: string,
  permissions: { write: boolean; terminal: boolean },
  statePrefix: string,
) {
  const stateDir = makeBenchDir(statePrefix);
  const prof = process.env.PROF ? ["--cpu-prof", `--cpu-prof-dir=${path.join(process.env.PROF, String(n))}`] : [];
  const { child, urls } = spawnServer(stateDir, {}, prof, path.resolve(entry));
  const { control } = await urls;
  const api = createControlPost(control);
  const project = await api("/api/projects", { name: "ab", root: projectDir, permissions });
  const session = await api("/api/sessions", { projectId: project.id });
  const { bases } = (await (await fetch(session.initUrl!)).json()) as { bases: { r: string; m?: string } };
  return { child, stateDir, bases };
}

export async function startBenchBridge(root: string, options: BenchBridgeOptions = {}): Promise<BenchBridge> {
  const stateDir = makeBenchDir("state");
  const { child, urls } = spawnServer(stateDir, options.env ?? {});
  const close = async () => {
    await stopChild(child);
    fs.rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    const { control } = await urls;
    const api = createControlPost(control);
    const permissions = options.permissions ?? { write: false, terminal: false };
    if (permissions.write || permissions.terminal) giveToAgent(root);
    const project = await api("/api/projects", { name: "bench", root, permissions });
    const session = await api("/api/sessions", { projectId: project.id });
    const { bases } = (await (await fetch(session.initUrl!)).json()) as { bases: BenchBridge["bases"] };
    return { bases, pid: child.pid!, control, projectId: project.id!, close };
  } catch (error) {
    await close();
    throw error;
  }
}
