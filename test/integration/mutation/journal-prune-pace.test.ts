// How often the journal prunes what scans every row (mutation/journal/retention.ts SCAN_PRUNE_EVERY_MS): the review
// record's budget is kept at the first prune and then at most once per interval, however many admissions come
// between, so its scan does not hold the event loop every 200 admissions (issue 34). A real state file, the real
// Journal and store, a clock the test moves; no bridge.
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../../server/log.js";
import { Journal } from "../../../server/mutation/journal/journal.js";
import { PRUNE_EVERY_ADMISSIONS, SCAN_PRUNE_EVERY_MS } from "../../../server/mutation/journal/retention.js";
import { openStore, type Store } from "../../../server/store/index.js";
import { makeTempDir } from "../../helpers/bridge.js";

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const IDENTITY = { sessionId: "s1", generation: 1, projectId: "p1", projectRoot: "/project", tool: "w" };
const RETENTION_MS = 1000;

function setup() {
  const store = openStore(makeTempDir("journal-prune-pace"));
  stores.push(store);
  store.projects.insert({ id: "p1", name: "p1", root: "/project", write: true, terminal: true });
  store.sessions.insert({ id: "s1", projectId: "p1", name: "s1", enabled: true, generation: 1 });
  const clock = { now: 0 };
  const journal = new Journal(store, createLogger("error"), () => clock.now, {
    retentionMs: RETENTION_MS,
    maxBytes: 1 << 30,
  });
  let calls = 0;
  const admit = () => journal.admit({ ...IDENTITY, callId: `c${calls++}`, argsHash: "h" }).row;
  return {
    clock,
    /** An admitted intent that recorded a change made at `at`; returns its call id. */
    change(at: number): string {
      const row = admit();
      store.changes.record(
        { ...IDENTITY, callId: row.callId, intentId: row.id },
        [{ path: "/project/f.txt", after: { content: Buffer.from(row.callId) } }],
        at,
      );
      return row.callId;
    },
    /** Admits up to the next prune, which runs at the clock's time. */
    untilPrune(): void {
      do admit();
      while (calls % PRUNE_EVERY_ADMISSIONS !== 0);
    },
    dropped: (callId: string) => store.changes.ofIntent("s1", callId).every((c) => c.detailDropped),
  };
}

describe("the journal's scanning prunes", () => {
  it("keep the review record's budget at the first prune, then at most once per interval", () => {
    const t = setup();
    const first = t.change(0);
    t.clock.now = 5 * RETENTION_MS;
    t.untilPrune();
    expect(t.dropped(first)).toBe(true);

    // Past retention by the next prune, which comes sooner than the interval: kept until the one after.
    const second = t.change(t.clock.now);
    t.clock.now += SCAN_PRUNE_EVERY_MS / 2;
    t.untilPrune();
    expect(t.dropped(second)).toBe(false);

    t.clock.now += SCAN_PRUNE_EVERY_MS / 2;
    t.untilPrune();
    expect(t.dropped(second)).toBe(true);
  });
});
