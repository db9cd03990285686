// How many commits an edit's journal records take (mutation/journal/journal.ts): a file tool's review changes ride
// on the commit of its checkpoint and outcome recorded ahead, not a commit of their own, since every commit costs the
// event loop its WAL write (issue 34). Commits are counted from the journal connection's WAL file itself (each
// commit ends with one commit frame). A real state file, the real Journal and store; no bridge.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, ToolError, toFailure } from "../../../server/errors.js";
import { createLogger } from "../../../server/log.js";
import { Journal } from "../../../server/mutation/journal/journal.js";
import type { Flight, IntentBody } from "../../../server/mutation/journal/intent.js";
import { STATE_FILE_NAME } from "../../../server/store/database.js";
import { openStore, type Store } from "../../../server/store/index.js";
import { makeTempDir } from "../../helpers/bridge.js";

const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;

/** Commit frames in a WAL file: valid frames (the header's salts) whose "database size after commit" is set. */
function walCommits(file: string): number {
  const wal = fs.readFileSync(file);
  if (wal.length < WAL_HEADER_BYTES) return 0;
  const pageSize = wal.readUInt32BE(8);
  const salts = wal.subarray(16, 24);
  let commits = 0;
  for (
    let at = WAL_HEADER_BYTES;
    at + FRAME_HEADER_BYTES + pageSize <= wal.length;
    at += FRAME_HEADER_BYTES + pageSize
  ) {
    if (!wal.subarray(at + 8, at + 16).equals(salts)) break;
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  }
  return commits;
}

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

/** A real state file with one project and session, and an edit admitted by the real Journal as callId. */
function admitEdit(callId: string) {
  const stateDir = makeTempDir("journal-commits");
  const store = openStore(stateDir);
  stores.push(store);
  store.projects.insert({ id: "p1", name: "p1", root: "/project", write: true, terminal: true });
  store.sessions.insert({ id: "s1", projectId: "p1", name: "s1", enabled: true, generation: 1 });
  const journal = new Journal(store, createLogger("error"));
  const { row } = journal.admit({
    sessionId: "s1",
    generation: 1,
    projectId: "p1",
    projectRoot: "/project",
    callId,
    tool: "e",
    argsHash: "h",
  });
  return { stateDir, store, journal, row };
}

describe("an edit's journal commits", () => {
  it("records the review changes in the commit of the checkpoint and the outcome ahead", async () => {
    const { stateDir, store, journal, row } = admitEdit("c1");
    const wal = path.join(stateDir, `${STATE_FILE_NAME}-wal`);
    const answer = { ok: true, path: "f.txt" } as IntentBody & { ok: true };
    let commitsBetween = -1;
    const flight = journal.launch(row, undefined, async (f: Flight) => {
      const before = walCommits(wal);
      journal.deferChanges(f, [
        {
          path: "/project/f.txt",
          before: { mode: 0o644, content: Buffer.from("a\n") },
          after: { content: Buffer.from("b\n") },
        },
      ]);
      journal.recordAhead(f, { path: "/project/f.txt" }, answer, undefined)();
      commitsBetween = walCommits(wal) - before;
      return answer;
    });
    await flight.promise;
    expect(commitsBetween).toBe(1);
    const [change] = store.changes.ofIntent("s1", "c1");
    expect(change?.path).toBe("/project/f.txt");
    expect(store.changes.blob(change!.after!.hash)?.toString()).toBe("b\n");
    expect(store.journal.get(row.id)?.state).toBe("succeeded");
  });

  it("forgets deferred changes of an intent that failed before writing them", async () => {
    const { store, journal, row } = admitEdit("c2");
    const flight = journal.launch(row, undefined, async (f: Flight) => {
      journal.deferChanges(f, [{ path: "/project/g.txt", after: { content: Buffer.from("new\n") } }]);
      return toFailure(new ToolError(ErrorCode.pathChanged, "changed meanwhile"));
    });
    expect((await flight.promise).ok).toBe(false);
    expect(store.changes.ofIntent("s1", "c2")).toEqual([]);
    expect(store.journal.get(row.id)?.state).toBe("failed");
  });
});
