// `urlbridge backup` against a bridge that keeps writing (a separate process, a read-only connection), and
// `urlbridge restore` into a fresh state directory: the restored bridge answers the same capability URLs and
// replays the same journal; without the capability key the restore is refused instead of rotating every session.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import {
  agentGet,
  makeTempDir,
  startTestBridge,
  TEST_OPERATOR_TOKEN,
  type AgentSession,
  type TestBridge,
} from "../../helpers/bridge.js";
import { runCli, unusedPort } from "./run-cli.js";

type Body = Record<string, unknown> & { ok: boolean };
const SQLITE_HEADER = "SQLite format 3\0";
/** Writes the bridge keeps making while the backup runs; bounded. */
const MAX_CONCURRENT_WRITES = 400;

describe("urlbridge backup and restore", () => {
  let t: TestBridge;
  let agent: AgentSession;
  let env: Record<string, string>;
  let backupDir: string;
  let firstWrite: Body;
  const writeUrl = () => `${agent.m}/w?path=notes.txt&raw=${encodeUrlText("written once\n")}`;

  beforeAll(async () => {
    t = await startTestBridge();
    agent = await t.session({ write: true });
    env = {
      URLBRIDGE_STATE_DIR: t.stateDir,
      URLBRIDGE_CONTROL_PORT: new URL(t.bridge.controlUrl).port,
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    };
    backupDir = makeTempDir("backups");
    firstWrite = await agentGet<Body>(writeUrl());
    expect(firstWrite).toMatchObject({ ok: true });
  });
  afterAll(async () => t.close());

  it("copies the database while the bridge writes, into a sound file readable only by its owner", async () => {
    const file = path.join(backupDir, "while-writing.sqlite");
    let stop = false;
    let writes = 0;
    const writer = (async () => {
      while (!stop && writes < MAX_CONCURRENT_WRITES) {
        writes += 1;
        const body = await agentGet<Body>(
          `${agent.m}/w?path=busy-${writes}.txt&raw=${encodeUrlText(`write ${writes}\n`)}`,
        );
        if (!body.ok) throw new Error(`a write during the backup failed: ${JSON.stringify(body)}`);
      }
    })();
    const result = await runCli(["backup", file, "--json"], env).finally(() => {
      stop = true;
    });
    await writer;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ file, projects: 1, sessions: 1, capabilities: 3 });
    expect(summary.journalEntries as number).toBeGreaterThanOrEqual(1);
    expect(writes).toBeGreaterThan(0);
    expect(fs.readFileSync(file).subarray(0, 16).toString("latin1")).toBe(SQLITE_HEADER);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(backupDir)).toEqual(["while-writing.sqlite"]);
  });

  it('writes the backup to stdout with "-", the summary to stderr', async () => {
    const result = await runCli(["backup", "-"], env);
    expect(result.code).toBe(0);
    expect(result.stdout.startsWith(SQLITE_HEADER)).toBe(true);
    expect(result.stderr).toMatch(/^Backed up 1 project\(s\), 1 session\(s\), \d+ journal entries/);
    expect(result.stderr).toContain("capability-key");
    expect(fs.readdirSync(t.stateDir).filter((f) => f.startsWith(".backup-"))).toEqual([]);
  });

  it("refuses to restore while a bridge answers on the state directory", async () => {
    const result = await runCli(["restore", path.join(backupDir, "while-writing.sqlite")], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^urlbridge: a bridge is running on this state directory .*stop it first/);
  });

  it("restores into a fresh state directory only with the key, and the restored bridge answers as before", async () => {
    const file = path.join(backupDir, "final.sqlite");
    expect((await runCli(["backup", file], env)).code).toBe(0);
    await t.close();

    const fresh = makeTempDir("restored-state");
    const freshEnv = {
      URLBRIDGE_STATE_DIR: fresh,
      URLBRIDGE_CONTROL_PORT: String(await unusedPort()),
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    };
    const keyless = await runCli(["restore", file], freshEnv);
    expect(keyless.code).toBe(1);
    expect(keyless.stderr).toMatch(
      /^urlbridge: the backup's sessions were sealed under capability key [0-9a-f]{16}, and .* does not exist; pass --key/,
    );
    expect(fs.existsSync(path.join(fresh, "urlbridge.sqlite"))).toBe(false);

    const restored = await runCli(["restore", file, "--key", path.join(t.stateDir, "capability-key")], freshEnv);
    expect(restored.stderr).toBe("");
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(
      /^Restored 1 project\(s\), 1 session\(s\), \d+ journal entries, .* with its capability key\./,
    );

    const again = await startTestBridge({}, { stateDir: fresh });
    try {
      const sessions = (await again.api<Array<{ id: string; initUrl: string }>>("GET", "/api/sessions")).body;
      expect(sessions.map((s) => s.id)).toEqual([agent.sessionId]);
      const initPath = new URL(agent.initUrl).pathname;
      expect(new URL(sessions[0]!.initUrl).pathname).toBe(initPath);
      const init = await agentGet<{ bases: { m: string } }>(sessions[0]!.initUrl);
      expect(new URL(init.bases.m).pathname).toBe(new URL(agent.m!).pathname);
      fs.writeFileSync(path.join(t.projectDir, "notes.txt"), "changed after the backup\n");
      const replay = await agentGet<Body>(`${init.bases.m}/w?path=notes.txt&raw=${encodeUrlText("written once\n")}`);
      expect(replay).toMatchObject({ ok: true, dedupe: "replayed", callId: firstWrite.callId });
      expect(fs.readFileSync(path.join(t.projectDir, "notes.txt"), "utf8")).toBe("changed after the backup\n");
    } finally {
      await again.close();
    }
  });

  it("also restores a plain copy of a database file left in WAL mode, leaving nothing beside the copy", async () => {
    const source = makeTempDir("plain-copy-source");
    const { openDatabase } = await import("../../../server/store/database.js");
    const { createStore } = await import("../../../server/store/index.js");
    const db = openDatabase(source);
    createStore(db);
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    const copies = makeTempDir("plain-copy");
    fs.copyFileSync(path.join(source, "urlbridge.sqlite"), path.join(copies, "copy.sqlite"));
    const fresh = makeTempDir("restore-plain");
    const result = await runCli(["restore", path.join(copies, "copy.sqlite")], {
      URLBRIDGE_STATE_DIR: fresh,
      URLBRIDGE_CONTROL_PORT: String(await unusedPort()),
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    });
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/^Restored 0 project\(s\), 0 session\(s\), 0 journal entries/);
    expect(fs.readdirSync(copies)).toEqual(["copy.sqlite"]);
    expect(fs.readdirSync(fresh).sort()).toEqual(["urlbridge.sqlite"]);
  });

  it.each([
    ["a file that is not SQLite", "not a database\n", /cannot be read as a urlbridge state database/],
    ["an SQLite file of something else", undefined, /is not a urlbridge state database \(no schema_migrations table\)/],
  ])("refuses to restore %s", async (_what, content, message) => {
    const file = path.join(backupDir, `other-${content ? "text" : "sqlite"}.db`);
    if (content) fs.writeFileSync(file, content);
    else {
      const { default: Database } = await import("better-sqlite3");
      const db = new Database(file);
      db.exec("CREATE TABLE t (x)");
      db.close();
    }
    const fresh = makeTempDir("restore-refused");
    const result = await runCli(["restore", file], {
      URLBRIDGE_STATE_DIR: fresh,
      URLBRIDGE_CONTROL_PORT: String(await unusedPort()),
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(fs.readdirSync(fresh)).toEqual([]);
  });
});
