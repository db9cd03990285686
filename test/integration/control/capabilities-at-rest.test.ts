// Capabilities at rest (issue 10, item 7): the state database never holds a usable capability token. Rows keep
// a keyed digest and the token sealed under <state>/capability-key; a database without that key yields nothing.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { STATE_FILE_NAME } from "../../../server/store/database.js";
import { CAPABILITY_KEY_FILE } from "../../../server/store/capability-key.js";
import { migrations } from "../../../server/store/migrations/index.js";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

const TOKEN_IN_URL = /\/v0\/(?:init\/)?([A-Za-z0-9]{8})/;

function tokensOf(s: AgentSession): string[] {
  return [s.initUrl, s.r, ...(s.m ? [s.m] : [])].map((url) => TOKEN_IN_URL.exec(url)![1]!);
}

/** Every byte the state directory holds for SQLite: the database, its WAL and shared-memory files. */
function databaseBytes(stateDir: string): Buffer {
  const file = path.join(stateDir, STATE_FILE_NAME);
  return Buffer.concat(
    ["", "-wal", "-shm"].filter((s) => fs.existsSync(file + s)).map((s) => fs.readFileSync(file + s)),
  );
}

function expectNoToken(stateDir: string, tokens: string[]): void {
  const bytes = databaseBytes(stateDir);
  expect(bytes.length).toBeGreaterThan(0);
  for (const token of tokens)
    expect(bytes.includes(Buffer.from(token, "latin1")), `token ${tokens.indexOf(token)} in the database files`).toBe(
      false,
    );
}

/** Data-plane path of a URL on another bridge (its origin changes with its port). */
const on = (t: TestBridge, url: string) => `${t.bridge.dataUrl}${new URL(url).pathname}${new URL(url).search}`;

async function sessionsOf(t: TestBridge): Promise<Array<{ id: string; initUrl: string }>> {
  return (await t.api<Array<{ id: string; initUrl: string }>>("GET", "/api/sessions")).body;
}

describe("capabilities at rest", () => {
  it("keeps no capability token in the database, its WAL or its shared memory, after calls and writes", async () => {
    const t = await startTestBridge();
    try {
      fs.writeFileSync(path.join(t.projectDir, "a.txt"), "hello\n");
      const reader = await t.session({ name: "reader" });
      const writer = await t.session({ name: "writer", write: true, terminal: true });
      expect(await agentGet(`${reader.r}/r?path=a.txt`)).toMatchObject({ ok: true });
      expect(await agentGet(`${writer.m}/w?path=b.txt&raw=written`)).toMatchObject({ ok: true });
      expect(await agentGet(`${writer.m}/nope`)).toMatchObject({ ok: false, errorCode: "unknown_route" });
      expect(await agentGet(`${writer.r}/w?path=c.txt&raw=x`)).toMatchObject({
        ok: false,
        errorCode: "wrong_capability_base",
      });
      await t.api("POST", `/api/sessions/${reader.sessionId}/rotate`);
      // The reader's tokens from before its rotation, and its fresh Init token from after.
      const tokens = new Set([...tokensOf(reader), ...tokensOf(writer)]);
      for (const s of await sessionsOf(t)) tokens.add(TOKEN_IN_URL.exec(s.initUrl)![1]!);
      expect(tokens.size).toBe(6);
      expectNoToken(t.stateDir, [...tokens]);
      const key = fs.statSync(path.join(t.stateDir, CAPABILITY_KEY_FILE));
      expect(key.mode & 0o777).toBe(0o600);
      expect(key.size).toBe(32);
    } finally {
      await t.close();
    }
  });

  it("keeps tokens working across a restart, and they are still nowhere in the files", async () => {
    const stateDir = makeTempDir("at-rest-restart");
    const first = await startTestBridge({}, { stateDir });
    const s = await first.session({ write: true });
    await first.close();
    const second = await startTestBridge({}, { stateDir });
    try {
      expect((await sessionsOf(second)).map((x) => new URL(x.initUrl).pathname)).toEqual([new URL(s.initUrl).pathname]);
      expect((await fetch(on(second, s.initUrl))).status).toBe(200);
      expect(await agentGet(on(second, `${s.r}/t?path=.`))).toMatchObject({ ok: true });
      expectNoToken(stateDir, tokensOf(s));
    } finally {
      await second.close();
    }
  });

  it("gives no usable URL from a database copied without its key file: the bridge there mints fresh ones", async () => {
    const original = await startTestBridge();
    const s = await original.session();
    await original.close();
    const copy = makeTempDir("at-rest-copy");
    for (const suffix of ["", "-wal"]) {
      const from = path.join(original.stateDir, STATE_FILE_NAME + suffix);
      if (fs.existsSync(from)) fs.copyFileSync(from, path.join(copy, STATE_FILE_NAME + suffix));
    }
    // What a thief sees: digests and sealed values, no token column.
    const raw = new Database(path.join(copy, STATE_FILE_NAME), { readonly: true });
    const columns = (
      raw.prepare("SELECT name FROM pragma_table_info('capabilities')").all() as Array<{ name: string }>
    ).map((c) => c.name);
    raw.close();
    expect(columns).toEqual(["digest", "session_id", "generation", "kind", "sealed", "created_at"]);

    const elsewhere = await startTestBridge({}, { stateDir: copy });
    try {
      for (const token of tokensOf(s))
        expect((await fetch(`${elsewhere.bridge.dataUrl}/v0/${token}/t?path=.`)).status).toBe(404);
      expect((await fetch(on(elsewhere, s.initUrl))).status).toBe(404);
      const [session] = await sessionsOf(elsewhere);
      expect(session!.id).toBe(s.sessionId);
      expect(new URL(session!.initUrl).pathname).not.toBe(new URL(s.initUrl).pathname);
      expect((await fetch(session!.initUrl)).status).toBe(200);
    } finally {
      await elsewhere.close();
    }
  });

  it("still rotates every session on start with URLBRIDGE_EPHEMERAL_CAPABILITIES=1", async () => {
    const stateDir = makeTempDir("at-rest-ephemeral");
    const first = await startTestBridge({}, { stateDir });
    const s = await first.session();
    await first.close();
    const second = await startTestBridge({ URLBRIDGE_EPHEMERAL_CAPABILITIES: "1" }, { stateDir });
    try {
      expect((await fetch(on(second, s.initUrl))).status).toBe(404);
      const [fresh] = await sessionsOf(second);
      expect(new URL(fresh!.initUrl).pathname).not.toBe(new URL(s.initUrl).pathname);
      expect((await fetch(fresh!.initUrl)).status).toBe(200);
      expectNoToken(stateDir, [...tokensOf(s), TOKEN_IN_URL.exec(fresh!.initUrl)![1]!]);
    } finally {
      await second.close();
    }
  });

  it("converts a database that held plaintext tokens (schema 2): the same URLs work and no plaintext is left", async () => {
    const stateDir = makeTempDir("at-rest-migrate");
    const project = makeTempDir("at-rest-migrate-project");
    const file = path.join(stateDir, STATE_FILE_NAME);
    const old = new Database(file);
    old.pragma("journal_mode = WAL");
    old.exec(
      "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
    );
    for (const m of migrations.filter((m) => m.version <= 2)) {
      old.exec(m.sql);
      old.prepare("INSERT INTO schema_migrations VALUES (?, ?, 0)").run(m.version, m.name);
    }
    old.prepare("INSERT INTO projects VALUES ('p_old', 'old', ?, 1, 0, 0, 0)").run(project);
    old.prepare("INSERT INTO sessions VALUES ('s_old', 'p_old', 'old-1', 1, 2, 0, 0)").run();
    // A rotated-away generation too: its tokens are dead, and must not linger in free pages either.
    const plaintext = { dead: "DeadInit", init: "InitTok1", read: "ReadTok1", mutation: "MutaTok1" };
    const insert = old.prepare("INSERT INTO capabilities VALUES (?, 's_old', ?, ?, 0)");
    insert.run(plaintext.dead, 1, "init");
    old.prepare("DELETE FROM capabilities").run();
    insert.run(plaintext.init, 2, "init");
    insert.run(plaintext.read, 2, "read");
    insert.run(plaintext.mutation, 2, "mutation");
    old.close();
    fs.chmodSync(file, 0o600);

    const t = await startTestBridge({}, { stateDir });
    try {
      const init = await agentGet<{ bases: { r: string; m: string } }>(`${t.bridge.dataUrl}/v0/init/${plaintext.init}`);
      expect(init.bases.r).toBe(`${t.bridge.dataUrl}/v0/${plaintext.read}`);
      expect(init.bases.m).toBe(`${t.bridge.dataUrl}/v0/${plaintext.mutation}`);
      expect((await sessionsOf(t))[0]!.initUrl).toBe(`${t.bridge.dataUrl}/v0/init/${plaintext.init}`);
      expectNoToken(stateDir, Object.values(plaintext));
    } finally {
      await t.close();
    }
  });
});
