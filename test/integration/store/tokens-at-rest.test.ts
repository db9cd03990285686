// No live capability at rest (issue 28, item 1): answers carry full URLs with the session's tokens (a `retry`, a
// `read`, a `repair`), and the journal records answers to replay them. The database, its WAL, a fresh backup and
// the bridge's log hold no live token of any session; replays still answer the live URLs.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ERROR_CATALOG } from "../../../server/errors.js";
import { createLogger } from "../../../server/log.js";
import { backupDatabase } from "../../../server/store/backup.js";
import { STATE_FILE_NAME } from "../../../server/store/database.js";
import {
  agentGet,
  makeTempDir,
  startTestBridge,
  type AgentSession,
  type TestBridge,
  writeAsAgent,
} from "../../helpers/bridge.js";
import { url } from "../mutation/fixtures.js";

const TOKEN_IN_URL = /\/v0\/(?:init\/)?([A-Za-z0-9]{8})/;
const MARK = "\uE000";
type Answer = Record<string, unknown> & { ok: boolean; errorCode?: string };

const tokenOf = (u: string) => TOKEN_IN_URL.exec(u)![1]!;
const tokensOf = (s: { initUrl: string; r: string; m?: string | undefined }) =>
  [s.initUrl, s.r, ...(s.m ? [s.m] : [])].map(tokenOf);

/** The database, its WAL and shared memory: every byte SQLite keeps in the state directory. */
function databaseFiles(stateDir: string): string[] {
  const file = path.join(stateDir, STATE_FILE_NAME);
  return ["", "-wal", "-shm"].map((s) => file + s).filter((f) => fs.existsSync(f));
}

/** Where each token occurs among the named byte sources: empty when none holds any. */
function tokensFound(sources: Record<string, Buffer>, tokens: string[]): string[] {
  const found: string[] = [];
  for (const [name, bytes] of Object.entries(sources)) {
    expect(bytes.length, name).toBeGreaterThan(0);
    for (const token of tokens)
      if (bytes.includes(Buffer.from(token, "latin1"))) found.push(`token #${tokens.indexOf(token)} in ${name}`);
  }
  return found;
}

/** `logLines`: the bridge's log, when the test captured it. */
async function scanAtRest(t: TestBridge, logLines: string[] | undefined, tokens: string[]): Promise<string[]> {
  t.bridge.store.activity.flush();
  const backup = path.join(makeTempDir("tokens-backup"), "state.sqlite");
  await backupDatabase(t.stateDir, backup);
  const sources: Record<string, Buffer> = { backup: fs.readFileSync(backup) };
  if (logLines) sources.log = Buffer.from(logLines.join(""), "utf8");
  for (const f of databaseFiles(t.stateDir)) sources[path.basename(f)] = fs.readFileSync(f);
  return tokensFound(sources, tokens);
}

/** Every string in an answer that is a URL on one of the session's bases. */
function urlsIn(answer: unknown, out: string[] = []): string[] {
  if (typeof answer === "string" && TOKEN_IN_URL.test(answer)) out.push(answer);
  else if (Array.isArray(answer)) for (const v of answer) urlsIn(v, out);
  else if (answer && typeof answer === "object") for (const v of Object.values(answer)) urlsIn(v, out);
  return out;
}

/** Mutations whose answers carry URLs with the session's tokens, each fetched twice (the second is a replay). */
async function workload(s: AgentSession, projectDir: string): Promise<Answer[]> {
  const m = s.m!;
  const mutationToken = tokenOf(m);
  writeAsAgent(path.join(projectDir, "unread.txt"), "line one\nline two\n");
  const calls = [
    url(m, "w", [["path", "unread.txt"]], "replaced without reading\n"), // stale_read: read + retry URLs
    url(
      m,
      "e",
      [
        ["path", "unread.txt"],
        ["old", "NOT-THERE-AT-ALL"],
      ],
      "x",
    ), // a failed edit: read URLs
    url(m, "w", [["path", `notes-${mutationToken}.txt`]], `the agent wrote its own URL: ${m}\n`), // the token in a path and content
    url(
      m,
      "e",
      [
        ["path", "unread.txt"],
        ["old", "line"],
      ],
      "row",
    ), // two matches
    url(m, "a", [], "*** Begin Patch\n*** Update File: unread.txt\n@@\n-line three\n+line 3\n*** End Patch\n"),
  ];
  const answers: Answer[] = [];
  for (const call of calls) {
    const first = await agentGet<Answer>(call);
    const replay = await agentGet<Answer>(call);
    // A replay renders the same live URLs the first answer carried.
    expect(urlsIn(replay).sort(), call).toEqual(urlsIn(first).sort());
    answers.push(first);
  }
  return answers;
}

describe("no live capability at rest", () => {
  it("leaves no live token in the database, its WAL, a fresh backup or the log after URL-carrying answers", async () => {
    const logLines: string[] = [];
    const t = await startTestBridge({}, { log: createLogger("debug", (line) => logLines.push(line)) });
    try {
      const reader = await t.session({ name: "reader" });
      const writer = await t.session({ name: "writer", write: true });
      expect(await agentGet(`${reader.r}/r?path=.`)).toMatchObject({ ok: true });
      const answers = await workload(writer, t.projectDir);
      expect(answers[0]).toMatchObject({ ok: false, errorCode: "stale_read" });
      expect(answers[0]!.retry).toContain(`/v0/${tokenOf(writer.m!)}/`);
      expect(answers[0]!.read).toContain(`/v0/${tokenOf(writer.r)}/`);
      // The URL edge's decoding notice (its readings' URLs) is made from the request at answer time and never stored:
      // what the journal keeps is the tool's answer without it.
      const carried = answers
        .filter(({ decoding: _notice, ...stored }) => urlsIn(stored as Answer).length > 0)
        .map((a) => a.errorCode);
      // The third call succeeds, and its diff shows the written content, which holds the agent's own URL.
      expect(carried).toEqual(["stale_read", "edit_no_match", undefined, "edit_ambiguous", "patch_hunk_not_found"]);
      expect(String(answers[2]!.diff)).toContain(writer.m!);
      // Staged content holding the session's own URL: kept at rest as placeholders, given back byte for byte.
      const staged = `my URL is ${writer.m} and ${writer.r}\n`;
      for (const blob of ["kept", "used"])
        expect(
          await agentGet(
            url(
              writer.m!,
              "s",
              [
                ["blob", blob],
                ["i", 0],
                ["count", 1],
              ],
              staged,
            ),
          ),
        ).toMatchObject({ ok: true, complete: true });
      expect(
        await agentGet(
          url(writer.m!, "w", [
            ["path", "from-blob.txt"],
            ["blob", "used"],
            ["count", 1],
          ]),
        ),
      ).toMatchObject({ ok: true });
      expect(fs.readFileSync(path.join(t.projectDir, "from-blob.txt"), "utf8")).toBe(staged);

      // After a rotation the new generation's answers carry the new tokens; the old ones are dead but still checked.
      await t.api("POST", `/api/sessions/${writer.sessionId}/rotate`);
      const views = (await t.api<Array<{ id: string; initUrl: string }>>("GET", "/api/sessions")).body;
      const rotatedInit = views.find((v) => v.id === writer.sessionId)!.initUrl;
      const init = await agentGet<{ bases: { r: string; m: string } }>(rotatedInit);
      const rotated = { initUrl: rotatedInit, r: init.bases.r, m: init.bases.m };
      const after = await agentGet<Answer>(url(rotated.m, "w", [["path", "unread.txt"]], "again\n"));
      expect(after).toMatchObject({ errorCode: "stale_read" });
      expect(after.retry).toContain(`/v0/${tokenOf(rotated.m)}/`);

      const tokens = [...tokensOf(reader), ...tokensOf(writer), ...tokensOf(rotated)];
      expect(new Set(tokens).size).toBe(8);
      expect(await scanAtRest(t, logLines, tokens)).toEqual([]);
      // Not a vacuous scan: the recorded answers hold URLs, as placeholders.
      const db = new Database(path.join(t.stateDir, STATE_FILE_NAME), { readonly: true });
      const concealed = db.prepare("SELECT COUNT(*) AS n FROM intents WHERE instr(result, ?) > 0").get(MARK) as {
        n: number;
      };
      const stagedAtRest = db
        .prepare("SELECT COUNT(*) AS n FROM staged_chunks WHERE blob = 'kept' AND instr(content, ?) > 0")
        .get(MARK) as { n: number };
      db.close();
      expect(concealed.n).toBeGreaterThanOrEqual(4);
      expect(stagedAtRest.n).toBe(1);
    } finally {
      await t.close();
    }
  });

  it("stores every catalogued error code's URLs as placeholders and gives them back on read", async () => {
    const t = await startTestBridge();
    try {
      const s = await t.session({ write: true });
      const journal = t.bridge.store.journal;
      const codes = Object.keys(ERROR_CATALOG);
      for (const [i, code] of codes.entries()) {
        const { row } = journal.admit({
          sessionId: s.sessionId,
          generation: 1,
          projectId: s.projectId,
          projectRoot: t.projectDir,
          callId: `catalog-${i}`,
          tool: "write",
          argsHash: "h",
          createdAt: Date.now(),
        });
        const body = {
          ok: false,
          errorCode: code,
          repair: `${s.m}/w?path=a&run=r${i}`,
          retry: `${s.m}/w?path=a&run=r${i}`,
          read: `${s.r}/r?path=a`,
          poll: `${s.m}/j?call=catalog-${i}`,
          repairHint: `Fetch ${s.initUrl} to start over.`,
        };
        journal.finish(row.id, "failed", body, null, Date.now());
        expect(journal.get(row.id)!.result).toEqual(body);
      }
      expect(await scanAtRest(t, undefined, tokensOf(s))).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it("migrates answers recorded verbatim by an older build: no token left, replays still answer the live URLs", async () => {
    const stateDir = makeTempDir("tokens-migrate");
    const first = await startTestBridge({}, { stateDir });
    const s = await first.session({ write: true });
    writeAsAgent(path.join(first.projectDir, "unread.txt"), "one\n");
    const call = url(s.m!, "w", [["path", "unread.txt"]], "two\n");
    const answer = await agentGet<Answer>(call);
    expect(answer).toMatchObject({ errorCode: "stale_read" });
    const staged = `stage of ${s.m} \uE000m kept as is\n`;
    expect(
      await agentGet(
        url(
          s.m!,
          "s",
          [
            ["blob", "old"],
            ["i", 0],
            ["count", 1],
          ],
          staged,
        ),
      ),
    ).toMatchObject({ ok: true });
    await first.close();

    // What an older build left: the results with the tokens in place, migration 7 not applied.
    const [initToken, readToken, mutationToken] = tokensOf(s);
    const old = new Database(path.join(stateDir, STATE_FILE_NAME));
    const letters: Record<string, string> = { i: initToken!, r: readToken!, m: mutationToken! };
    const plain = (text: string) => text.replace(/\uE000([irm])/g, (_, l: string) => letters[l]!);
    for (const r of old.prepare("SELECT id, result FROM intents WHERE result IS NOT NULL").all() as Array<{
      id: number;
      result: string;
    }>) {
      old.prepare("UPDATE intents SET result = ? WHERE id = ?").run(plain(r.result), r.id);
    }
    // An older build stored staged text as sent, a private-use character included.
    old.prepare("UPDATE staged_chunks SET content = ? WHERE blob = 'old'").run(staged);
    old.prepare("DELETE FROM schema_migrations WHERE version = 7").run();
    const verbatim = old.prepare("SELECT COUNT(*) AS n FROM intents WHERE instr(result, ?) > 0").get(mutationToken) as {
      n: number;
    };
    old.close();
    expect(verbatim.n).toBeGreaterThan(0);

    const second = await startTestBridge({}, { stateDir });
    try {
      const on = (u: string) => `${second.bridge.dataUrl}${new URL(u).pathname}${new URL(u).search}`;
      const replay = await agentGet<Answer>(on(call));
      expect(replay.errorCode).toBe("stale_read");
      expect(tokenOf(replay.retry as string)).toBe(mutationToken);
      expect(tokenOf(replay.read as string)).toBe(readToken);
      expect(
        await agentGet(
          on(
            url(s.m!, "w", [
              ["path", "from-old-blob.txt"],
              ["blob", "old"],
              ["count", 1],
            ]),
          ),
        ),
      ).toMatchObject({ ok: true });
      expect(fs.readFileSync(path.join(first.projectDir, "from-old-blob.txt"), "utf8")).toBe(staged);
      expect(await scanAtRest(second, undefined, tokensOf(s))).toEqual([]);
    } finally {
      await second.close();
    }
  });
});
