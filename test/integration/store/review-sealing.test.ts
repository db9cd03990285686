// The review record seals only what it has not stored yet (store/changes.ts record): a side whose bytes are stored
// already is named, not sealed again, and a path recorded lately keeps its sealed form and key. Each seal costs the
// event loop a random iv and a cipher, and a small /e used to pay for three of them. A real state file and the real
// capability key; the sealer is the real one, counted as it is called.
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import {
  createCapabilitySealer,
  loadCapabilityKey,
  type CapabilitySealer,
} from "../../../server/store/capability-key.js";
import { createChangeQueries, type ChangeAuthor } from "../../../server/store/changes.js";
import { openStore, type Store } from "../../../server/store/index.js";
import { makeTempDir } from "../../helpers/bridge.js";

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

function countedChanges() {
  const stateDir = makeTempDir("sealing-state");
  const store = openStore(stateDir);
  stores.push(store);
  store.projects.insert({ id: "p1", name: "p1", root: "/project", write: true, terminal: true });
  store.sessions.insert({ id: "s1", projectId: "p1", name: "s1", enabled: true, generation: 1 });
  const real = createCapabilitySealer(loadCapabilityKey(stateDir).key);
  const sealed: Buffer[] = [];
  const sealer: CapabilitySealer = {
    ...real,
    sealBytes: (content) => {
      sealed.push(content);
      return real.sealBytes(content);
    },
  };
  return { store, changes: createChangeQueries(store.db, sealer), sealed };
}

function authorOf(intentId: number): ChangeAuthor {
  return {
    sessionId: "s1",
    generation: 1,
    projectId: "p1",
    projectRoot: "/project",
    intentId,
    callId: `c${intentId}`,
    tool: "e",
  };
}

describe("the review record's sealing", () => {
  it("seals an edit's before only when its bytes are not stored yet", () => {
    const { changes, sealed } = countedChanges();
    const [a, b] = [randomBytes(2048), randomBytes(2048)];
    changes.record(
      authorOf(1),
      [{ path: "/project/f", before: { mode: 0o644, content: a }, after: { content: b } }],
      1,
    );
    const first = sealed.filter((s) => s.length === 2048).length;
    changes.record(
      authorOf(2),
      [{ path: "/project/f", before: { mode: 0o644, content: b }, after: { content: a } }],
      2,
    );
    expect(first).toBe(2);
    // The second edit's sides are both the first edit's bytes: nothing more sealed, both still open whole.
    expect(sealed.filter((s) => s.length === 2048)).toHaveLength(2);
    const [row] = changes.ofIntent("s1", "c2");
    expect(changes.blob(row!.before!.hash)?.equals(b)).toBe(true);
    expect(changes.blob(row!.after!.hash)?.equals(a)).toBe(true);
  });

  it("seals a path recorded again once, and its rows still open to it and find it", () => {
    const { store, changes, sealed } = countedChanges();
    for (let i = 1; i <= 3; i++)
      changes.record(authorOf(i), [{ path: "/project/same.txt", after: { content: Buffer.from(`v${i}`) } }], i);
    expect(sealed.filter((s) => s.toString() === "/project/same.txt")).toHaveLength(1);
    const paths = store.db.prepare("SELECT path, path_key FROM file_changes ORDER BY id").all();
    expect(new Set(paths.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(changes.ofIntent("s1", "c3")[0]!.path).toBe("/project/same.txt");
  });
});
