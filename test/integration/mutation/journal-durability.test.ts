// How many times a mutation makes the journal durable (store.journalSync, a real state file): one fsync before
// its first side effect (admission, start and checkpoint together) and one for its outcome; replays and reads none.
// /e and /w record their outcome with the checkpoint, ahead of the rename, so that one fsync covers both.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; state?: string; dedupe?: string };

const EDITS = 10;

describe("journal durability points", () => {
  let t: TestBridge;
  let s: AgentSession;
  const syncs = () => t.bridge.store.journalSync.syncs;
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, terminal: true });
  });
  afterAll(async () => t.close());

  it("makes each /e durable once (admission, start, checkpoint and outcome, before the rename), and a replay or a read not at all", async () => {
    writeAsAgent(path.join(t.projectDir, "count.txt"), "n=0\n");
    const before = syncs();
    let last = "";
    for (let i = 0; i < EDITS; i++) {
      last = url(
        s.m!,
        "e",
        [
          ["path", "count.txt"],
          ["old", `n=${i}`],
        ],
        `n=${i + 1}`,
      );
      const body = await agentGet<Body>(last);
      expect(body).toMatchObject({ ok: true, state: "succeeded" });
    }
    expect(syncs() - before).toBe(EDITS);
    expect(fs.readFileSync(path.join(t.projectDir, "count.txt"), "utf8")).toBe(`n=${EDITS}\n`);

    const settled = syncs();
    expect(await agentGet<Body>(last)).toMatchObject({ ok: true, dedupe: "replayed" });
    expect((await agentGet<Body>(url(s.r, "r", [["path", "count.txt"]]))).ok).toBe(true);
    expect(syncs()).toBe(settled);
  });

  it("records a failed edit durably with one fsync: it never reached a side effect, only its outcome waits", async () => {
    writeAsAgent(path.join(t.projectDir, "miss.txt"), "nothing here\n");
    const before = syncs();
    const body = await agentGet<Body>(
      url(
        s.m!,
        "e",
        [
          ["path", "miss.txt"],
          ["old", "absent text"],
        ],
        "x",
      ),
    );
    expect(body).toMatchObject({ ok: false, errorCode: "edit_no_match", state: "failed" });
    expect(syncs() - before).toBe(1);
    expect(fs.readFileSync(path.join(t.projectDir, "miss.txt"), "utf8")).toBe("nothing here\n");
  });

  it("lands concurrent edits of one project queued behind each other, each with one journal fsync of its own", async () => {
    const slots = 20;
    const file = path.join(t.projectDir, "queued.txt");
    writeAsAgent(file, Array.from({ length: slots }, (_, i) => `slot ${i};`).join("\n") + "\n");
    const before = syncs();
    const bodies = await Promise.all(
      Array.from({ length: slots }, (_, i) =>
        agentGet<Body>(
          url(
            s.m!,
            "e",
            [
              ["path", "queued.txt"],
              ["old", `slot ${i};`],
            ],
            `done ${i};`,
          ),
        ),
      ),
    );
    expect(bodies.every((b) => b.ok && b.state === "succeeded")).toBe(true);
    expect(fs.readFileSync(file, "utf8")).toBe(Array.from({ length: slots }, (_, i) => `done ${i};`).join("\n") + "\n");
    const made = syncs() - before;
    // Each edit commits after the one before it renamed (the write queue), so no two can share an fsync.
    expect(made).toBe(slots);
  });

  it("makes a new file's /w durable once, and a failed /w once for its outcome", async () => {
    const before = syncs();
    const created = await agentGet<Body>(url(s.m!, "w", [["path", "new/durable.txt"]], "fresh\n"));
    expect(created).toMatchObject({ ok: true, state: "succeeded", created: true });
    expect(syncs() - before).toBe(1);
    expect(fs.readFileSync(path.join(t.projectDir, "new/durable.txt"), "utf8")).toBe("fresh\n");
    writeAsAgent(path.join(t.projectDir, "unread.txt"), "never read\n");
    const refused = syncs();
    expect(await agentGet<Body>(url(s.m!, "w", [["path", "unread.txt"]], "replaced\n"))).toMatchObject({
      ok: false,
      errorCode: "stale_read",
      state: "failed",
    });
    expect(syncs() - refused).toBe(1);
  });

  it("makes a terminal command durable before it is spawned and once for its outcome", async () => {
    const before = syncs();
    const body = await agentGet<Body>(url(s.m!, "x", [["run", "durability"]], "echo hi"));
    expect(body).toMatchObject({ ok: true, state: "succeeded" });
    expect(syncs() - before).toBe(2);
  });
});
