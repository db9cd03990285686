// deploy/UPGRADE.md's backup and restore on the appliance: `urlbridge backup -` streamed out of the running
// container while an agent keeps writing, the capability key copied once, `urlbridge restore` in a one-off
// container onto a fresh state volume, and a fresh container on it whose sessions and journal answer as before.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { getContainerRuntimeClient } from "testcontainers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeUrlText } from "../../server/url-grammar/encode.js";
import {
  startUrlbridge,
  URLBRIDGE_STATE_DIR,
  type StartedUrlbridge,
  type UrlbridgeSession,
} from "../../testcontainers/index.js";
import { buildBridgeImage, BRIDGE_IMAGE, e2eName } from "./support/containers.js";

const run = promisify(execFile);
type Body = Record<string, unknown> & { ok: boolean };
const SQLITE_HEADER = "SQLite format 3\0";
const MAX_POLLS = 60;
/** Writes the agent keeps making while the backup runs; bounded. */
const MAX_BUSY_WRITES = 200;

const original = e2eName("backup-state");
const restored = e2eName("restored-state");
let workDir: string;
let projectDir: string;
let backupDir: string;
let source: StartedUrlbridge | undefined;
let fresh: StartedUrlbridge | undefined;
let session: UrlbridgeSession;
let before: { write: Body; command: Body; sessions: unknown };

const get = async (url: string) => (await (await fetch(url)).json()) as Body;

async function settle(url: string): Promise<Body> {
  let body = await get(url);
  for (let i = 0; i < MAX_POLLS && (body.state === "pending" || body.state === "running"); i++)
    body = await get(String(body.poll));
  return body;
}

async function sessionsOf(urlbridge: StartedUrlbridge) {
  const sessions = await urlbridge.control.request<
    Array<{ id: string; name: string; generation: number; initUrl: string }>
  >("GET", "/api/sessions");
  return sessions.map((s) => ({ id: s.id, name: s.name, generation: s.generation, init: new URL(s.initUrl).pathname }));
}

const writeUrl = (base: string) => `${base}/w?path=notes.txt&raw=${encodeUrlText("written before the backup\n")}`;
const commandUrl = (base: string) => `${base}/x?wait=1500&raw=${encodeUrlText("echo ran >> ran.log; wc -l < ran.log")}`;

beforeAll(async () => {
  await buildBridgeImage();
  workDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-e2e-backup-")));
  projectDir = path.join(workDir, "projects", "demo");
  backupDir = path.join(workDir, "backups");
  fs.mkdirSync(projectDir, { recursive: true });
  fs.mkdirSync(backupDir);
  fs.chmodSync(workDir, 0o755);
  fs.chmodSync(path.join(workDir, "projects"), 0o755);
  fs.chmodSync(projectDir, 0o777);
  source = await startUrlbridge({
    image: BRIDGE_IMAGE,
    stateVolume: original,
    project: { dir: projectDir, name: "demo", write: true, terminal: true },
    name: e2eName("backup-source"),
  });
  session = source.session!;
});

afterAll(async () => {
  for (const started of [source, fresh]) await started?.stop().catch(() => undefined);
  const client = await getContainerRuntimeClient();
  for (const volume of [original, restored])
    await client.container.dockerode
      .getVolume(volume)
      .remove()
      .catch(() => undefined);
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

describe("backup and restore of the appliance", () => {
  it("backs up the running bridge to stdout while an agent writes, and copies the capability key once", async () => {
    before = {
      write: await settle(writeUrl(session.mutationBase!)),
      command: await settle(commandUrl(session.mutationBase!)),
      sessions: await sessionsOf(source!),
    };
    expect(before.write).toMatchObject({ ok: true });
    expect(before.command).toMatchObject({ ok: true, stdout: "1\n" });

    let stop = false;
    let writes = 0;
    const busy = (async () => {
      while (!stop && writes < MAX_BUSY_WRITES) {
        writes += 1;
        const body = await get(
          `${session.mutationBase}/w?path=busy/${writes}.txt&raw=${encodeUrlText(`busy ${writes}\n`)}`,
        );
        if (!body.ok) throw new Error(`a write during the backup failed: ${JSON.stringify(body)}`);
      }
    })();
    // What the guide runs: docker compose exec -T bridge urlbridge backup - > urlbridge-backup.sqlite
    const id = source!.container.getId();
    const backup = await run("docker", ["exec", id, "urlbridge", "backup", "-"], {
      encoding: "buffer",
      maxBuffer: 256 * 1024 * 1024,
    }).finally(() => {
      stop = true;
    });
    await busy;
    fs.writeFileSync(path.join(backupDir, "urlbridge-backup.sqlite"), backup.stdout);
    expect(backup.stdout.subarray(0, 16).toString("latin1")).toBe(SQLITE_HEADER);
    expect(backup.stderr.toString("utf8")).toMatch(/^Backed up 1 project\(s\), 1 session\(s\), \d+ journal entries/);
    // ... and once, kept apart from the backups: docker compose cp bridge:/var/lib/urlbridge/capability-key ...
    await run("docker", [
      "cp",
      `${id}:${URLBRIDGE_STATE_DIR}/capability-key`,
      path.join(backupDir, "urlbridge-capability-key"),
    ]);
    expect(fs.statSync(path.join(backupDir, "urlbridge-capability-key")).size).toBe(32);
  });

  it("restores onto a fresh volume with a one-off container, refusing it without the key", async () => {
    await source!.stop();
    source = undefined;
    const restore = (...args: string[]) =>
      run("docker", [
        "run",
        "--rm",
        "--name",
        e2eName("restore"),
        "-v",
        `${restored}:${URLBRIDGE_STATE_DIR}`,
        "-v",
        `${backupDir}:/restore:ro`,
        BRIDGE_IMAGE,
        "urlbridge",
        "restore",
        ...args,
      ]);
    const keyless = await restore("/restore/urlbridge-backup.sqlite").catch(
      (error: { stderr: string; code: number }) => error,
    );
    expect("code" in keyless && keyless.code).toBe(1);
    expect(String(keyless.stderr)).toMatch(
      /sealed under capability key [0-9a-f]{16}, and \/var\/lib\/urlbridge\/capability-key does not exist; pass --key/,
    );
    const done = await restore("/restore/urlbridge-backup.sqlite", "--key", "/restore/urlbridge-capability-key");
    expect(done.stdout).toMatch(
      /^Restored 1 project\(s\), 1 session\(s\), \d+ journal entries, .* with its capability key\./,
    );
  });

  it("starts a fresh container on the restored volume whose sessions and journal answer as before", async () => {
    fresh = await startUrlbridge({
      image: BRIDGE_IMAGE,
      stateVolume: restored,
      projectsDir: path.join(workDir, "projects"),
      name: e2eName("backup-restored"),
    });
    expect(await sessionsOf(fresh)).toEqual(before.sessions);
    const again = await fresh.control.session(session.id);
    expect(new URL(again.mutationBase!).pathname).toBe(new URL(session.mutationBase!).pathname);
    fs.writeFileSync(path.join(projectDir, "notes.txt"), "changed after the backup\n");
    expect(await settle(writeUrl(again.mutationBase!))).toMatchObject({
      ok: true,
      dedupe: "replayed",
      callId: before.write.callId,
    });
    expect(fs.readFileSync(path.join(projectDir, "notes.txt"), "utf8")).toBe("changed after the backup\n");
    expect(await settle(commandUrl(again.mutationBase!))).toMatchObject({
      ok: true,
      dedupe: "replayed",
      stdout: "1\n",
      callId: before.command.callId,
    });
    expect(fs.readFileSync(path.join(projectDir, "ran.log"), "utf8")).toBe("ran\n");
    expect((await get(`${again.readBase}/r?path=notes.txt`)).ok).toBe(true);
  });
});
