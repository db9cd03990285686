// Starts a real bridge in-process on port 0 with a temp state dir and a temp project, for integration tests.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startBridge, type Bridge, type BridgeOptions } from "../../server/bridge.js";
import { loadConfig } from "../../server/config.js";

export const TEST_OPERATOR_TOKEN = "test-operator-token-0123456789";

export interface TestBridge {
  bridge: Bridge;
  stateDir: string;
  /** A fresh temp directory; tests fill it as they need. */
  projectDir: string;
  api<T = unknown>(method: string, route: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** Creates a project on projectDir (or root) and one session; returns its bases from Init. */
  session(options?: {
    write?: boolean;
    terminal?: boolean;
    web?: boolean;
    root?: string;
    name?: string;
  }): Promise<AgentSession>;
  close(): Promise<void>;
}

export interface AgentSession {
  sessionId: string;
  projectId: string;
  initUrl: string;
  init: Record<string, unknown> & { bases: { r: string; m?: string } };
  r: string;
  m: string | undefined;
}

const createdTempDirs = new Set<string>();

/** A fresh directory under the OS temp dir, removed after the test file by removeTempDirs (test/setup.ts). */
export function makeTempDir(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `urlbridge-${prefix}-`)));
  createdTempDirs.add(dir);
  return dir;
}

/**
 * A fresh temp directory to register as a project root, handed to the agent (giveToAgent) as an operator's project
 * folder belongs to its user: write is refused on a folder the agent cannot write (server/control/writability.ts).
 */
export function makeProjectDir(prefix: string): string {
  const dir = makeTempDir(prefix);
  giveToAgent(dir);
  return dir;
}

/** Removes every directory makeTempDir made in this test file (each file runs in its own worker). */
export function removeTempDirs(): void {
  for (const dir of createdTempDirs) {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
  }
  createdTempDirs.clear();
}

export async function startTestBridge(
  env: Record<string, string> = {},
  options: BridgeOptions & { stateDir?: string } = {},
): Promise<TestBridge> {
  const stateDir = options.stateDir ?? makeTempDir("state");
  const projectDir = makeTempDir("project");
  const config = loadConfig({
    URLBRIDGE_STATE_DIR: stateDir,
    URLBRIDGE_CONTROL_PORT: "0",
    URLBRIDGE_DATA_PORT: "0",
    URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    URLBRIDGE_LOG_LEVEL: "silent",
    URLBRIDGE_BROWSE_ROOTS: os.tmpdir(),
    // Suites that send thousands of unknown tokens on purpose (fuzz, grammar) would be held for hours;
    // test/integration/gateway/unknown-token-flood.test.ts turns it back on.
    URLBRIDGE_UNKNOWN_TOKEN_THROTTLE: "0",
    // Terminal HOME/TMPDIR per project, removed with the test's other temp dirs.
    URLBRIDGE_SCRATCH_DIR: makeTempDir("scratch"),
    ...env,
  });
  const bridge = await startBridge(config, options);
  let projects = 0;

  async function api<T>(method: string, route: string, body?: unknown) {
    const res = await fetch(`${bridge.controlUrl}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${TEST_OPERATOR_TOKEN}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  return {
    bridge,
    stateDir,
    projectDir,
    api,
    async session(opts = {}) {
      projects += 1;
      giveToAgent(opts.root ?? projectDir);
      reachableByAgent(opts.root ?? projectDir);
      const project = await api<{ id: string }>("POST", "/api/projects", {
        name: opts.name ?? `project-${projects}`,
        root: opts.root ?? projectDir,
        permissions: {
          write: opts.write ?? false,
          terminal: opts.terminal ?? false,
          ...(opts.web !== undefined ? { web: opts.web } : {}),
        },
      });
      if (project.status !== 201) throw new Error(`project create failed: ${JSON.stringify(project.body)}`);
      const session = await api<{ id: string; initUrl: string }>("POST", "/api/sessions", {
        projectId: project.body.id,
      });
      if (session.status !== 201) throw new Error(`session create failed: ${JSON.stringify(session.body)}`);
      const init = (await (await fetch(session.body.initUrl)).json()) as AgentSession["init"];
      return {
        sessionId: session.body.id,
        projectId: project.body.id,
        initUrl: session.body.initUrl,
        init,
        r: init.bases.r,
        m: init.bases.m,
      };
    },
    async close() {
      await bridge.close();
    },
  };
}

/** The identity sandboxed terminal commands run as for a root-owned folder when the tests run as root. */
export const TEST_AGENT_UID = 1000;

/**
 * As root, the bridge runs a project's commands as the folder's owner, falling back to uid 1000 for root-owned
 * folders (server/sandbox/identity.ts). Temp projects are made by root here, so they are handed to that uid, as
 * an operator's real project folder belongs to its user. Files a test writes later stay readable (0644).
 */
export function giveToAgent(dir: string, recursive = true): void {
  if (process.getuid?.() !== 0) return;
  const walk = (p: string) => {
    const stat = fs.lstatSync(p);
    // Another user's entry is left as it is; an agent's folder is entered, for what root wrote in it since.
    if (stat.uid !== 0 && stat.uid !== TEST_AGENT_UID) return;
    if (stat.uid === 0) fs.lchownSync(p, TEST_AGENT_UID, TEST_AGENT_UID);
    if (recursive && stat.isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
  };
  walk(dir);
}

/**
 * Creates a folder as the agent would (mkdir -p, then every folder it made handed to TEST_AGENT_UID when the tests run
 * as root): a fixture made after the root was handed over is the agent's, as the agent's own work is, so file tools
 * (which decide as the agent, server/sandbox/agent-access.ts) may change it. Same arguments as fs.mkdirSync.
 */
export function mkdirAsAgent(dir: string, options?: fs.MakeDirectoryOptions): string | undefined {
  const first = fs.mkdirSync(dir, { ...options, recursive: true });
  if (first !== undefined) giveToAgent(first);
  return first;
}

/** Writes a fixture file as the agent would (see mkdirAsAgent), its missing folders too. Same arguments as fs.writeFileSync. */
export function writeAsAgent(file: string, data: string | NodeJS.ArrayBufferView, options?: fs.WriteFileOptions): void {
  mkdirAsAgent(path.dirname(file));
  fs.writeFileSync(file, data, options);
  if (process.getuid?.() === 0 && fs.lstatSync(file).uid === 0) fs.lchownSync(file, TEST_AGENT_UID, TEST_AGENT_UID);
}

/**
 * Gives the agent the folders between a project root and the temp dir it was made in (mkdtemp makes that 0700 and
 * root's), so it can reach the root as a real user reaches a folder under their home: the bridge's writability
 * check probes as the agent (server/control/writability.ts), and a folder it cannot reach is not writable to it.
 */
function reachableByAgent(root: string): void {
  if (process.getuid?.() !== 0) return;
  const top = [...createdTempDirs].find((dir) => root.startsWith(`${dir}/`));
  if (!top) return;
  for (let dir = path.dirname(root); dir.length >= top.length; dir = path.dirname(dir)) giveToAgent(dir, false);
}

/** GETs a data-plane URL exactly as given (no re-encoding) and parses JSON. */
export async function agentGet<T = Record<string, unknown>>(url: string): Promise<T> {
  const res = await fetch(url);
  return (await res.json()) as T;
}
