// Durable secrets (issue 28, item 4): the capability key and the operator token are written whole or not at all
// (temp file, fsync, link or rename, folder fsync), survive a SIGKILL right after the first start, and a damaged
// key stops the bridge with the way to restore it from the copy kept with the backups, not only "delete it".
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CAPABILITY_KEY_FILE } from "../../../server/store/capability-key.js";
import { OPERATOR_TOKEN_FILE } from "../../../server/control/operator-token.js";
import { makeTempDir } from "../../helpers/bridge.js";
import { killServerProcesses, startServerProcess, type ServerProcess } from "../../helpers/server-process.js";

afterEach(killServerProcesses);

const REPO = path.resolve(import.meta.dirname, "../../..");
/** The operator token comes from <state>/operator-token, as on a fresh install. */
const FROM_FILE = { URLBRIDGE_OPERATOR_TOKEN: "" };

async function api<T>(server: ServerProcess, token: string, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${server.controlUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** A first start that creates a project and a session, then dies by SIGKILL at once. */
async function firstStartKilled(
  stateDir: string,
): Promise<{ key: Buffer; token: string; sessionId: string; initPath: string }> {
  const server = await startServerProcess({ stateDir, env: FROM_FILE });
  const token = fs.readFileSync(path.join(stateDir, OPERATOR_TOKEN_FILE), "utf8").trim();
  const project = await api<{ id: string }>(server, token, "POST", "/api/projects", {
    name: "p",
    root: makeTempDir("durable-project"),
    permissions: { write: false, terminal: false },
  });
  const session = await api<{ id: string; initUrl: string }>(server, token, "POST", "/api/sessions", {
    projectId: project.id,
  });
  server.child.kill("SIGKILL");
  await server.exited;
  return {
    key: fs.readFileSync(path.join(stateDir, CAPABILITY_KEY_FILE)),
    token,
    sessionId: session.id,
    initPath: new URL(session.initUrl).pathname,
  };
}

describe("durable secrets", () => {
  it("keeps the key, the operator token and the sessions' URLs across a SIGKILL right after the first start", async () => {
    const stateDir = makeTempDir("durable-state");
    const before = await firstStartKilled(stateDir);
    expect(before.key.length).toBe(32);

    const server = await startServerProcess({ stateDir, env: FROM_FILE });
    expect(fs.readFileSync(path.join(stateDir, CAPABILITY_KEY_FILE)).equals(before.key)).toBe(true);
    expect(fs.readFileSync(path.join(stateDir, OPERATOR_TOKEN_FILE), "utf8").trim()).toBe(before.token);
    const sessions = await api<Array<{ id: string; initUrl: string }>>(server, before.token, "GET", "/api/sessions");
    expect(sessions.map((s) => [s.id, new URL(s.initUrl).pathname])).toEqual([[before.sessionId, before.initPath]]);
    expect((await fetch(`${server.dataUrl}${before.initPath}`)).status).toBe(200);
    // No temp file is left behind beside the secrets.
    expect(fs.readdirSync(stateDir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it.each([0, 31])(
    "refuses to start on a %i-byte key and says how to restore it from the kept copy",
    async (length) => {
      const stateDir = makeTempDir("durable-damaged");
      const { key } = await firstStartKilled(stateDir);
      fs.writeFileSync(path.join(stateDir, CAPABILITY_KEY_FILE), key.subarray(0, length));
      const failure = await startServerProcess({ stateDir, env: FROM_FILE }).then(
        () => "started",
        (error: Error) => error.message,
      );
      expect(failure).toContain(`holds ${length} bytes, not 32`);
      expect(failure).toContain("Restore it");
      expect(failure).toContain('deploy/UPGRADE.md "Backups"');
      expect(failure).toContain("urlbridge restore <backup> --key");
      // The damaged file is left for the operator to replace, not silently regenerated.
      expect(fs.statSync(path.join(stateDir, CAPABILITY_KEY_FILE)).size).toBe(length);
    },
  );

  const strace = spawnSync("strace", ["-V"]).status === 0;
  it.skipIf(!strace)(
    "writes the key to a temp file, fsyncs it, links it into place and fsyncs the folder (strace)",
    () => {
      const dir = makeTempDir("durable-strace");
      const stateDir = path.join(dir, "state");
      const trace = path.join(dir, "trace");
      const script = `import(${JSON.stringify(path.join(REPO, "server/store/capability-key.ts"))}).then((m) => m.loadCapabilityKey(${JSON.stringify(stateDir)}))`;
      execFileSync(
        "strace",
        [
          "-f",
          "-e",
          "trace=openat,fsync,link,linkat,rename,renameat,renameat2",
          "-o",
          trace,
          process.execPath,
          "--import",
          "tsx",
          "-e",
          script,
        ],
        { cwd: REPO },
      );
      const keyFile = path.join(stateDir, CAPABILITY_KEY_FILE);
      // "<pid> call(args) = result", for the calls on the state dir's names and the fsyncs among them.
      const calls = fs
        .readFileSync(trace, "utf8")
        .split("\n")
        .map((line) => /^\d+\s+(\w+)\((.*)\)\s+=\s+(-?\d+)/.exec(line))
        .filter((m): m is RegExpExecArray => m !== null)
        .map(([, call, args, result]) => ({ call: call!, args: args!, result: Number(result) }));
      const index = (pred: (c: (typeof calls)[number]) => boolean) => calls.findIndex(pred);
      const tempOpen = index(
        (c) => c.call === "openat" && /capability-key\.\d+\.tmp"/.test(c.args) && c.args.includes("O_CREAT"),
      );
      const tempFd = calls[tempOpen]!.result;
      const tempSync = calls.findIndex((c, i) => i > tempOpen && c.call === "fsync" && c.args === String(tempFd));
      const linked = index((c) => (c.call === "link" || c.call === "linkat") && c.args.includes(`"${keyFile}"`));
      const folderOpen = calls.findIndex(
        (c, i) => i > linked && c.call === "openat" && c.args.includes(`"${stateDir}"`),
      );
      const folderSync = calls.findIndex(
        (c, i) => i > folderOpen && c.call === "fsync" && c.args === String(calls[folderOpen]!.result),
      );
      expect(tempOpen).toBeGreaterThanOrEqual(0);
      expect(tempSync).toBeGreaterThan(tempOpen);
      expect(linked).toBeGreaterThan(tempSync);
      expect(folderOpen).toBeGreaterThan(linked);
      expect(folderSync).toBeGreaterThan(folderOpen);
      expect(fs.readFileSync(keyFile).length).toBe(32);
    },
  );
});
