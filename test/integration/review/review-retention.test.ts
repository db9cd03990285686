// The review record's budget (issue 30, item 6): past the retention or the size budget the oldest changes'
// contents are dropped first, and every answer says so (detailDropped, review_detail_dropped); nothing is shown
// or reverted from contents that are gone.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url } from "../mutation/fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; callId?: string };

describe("review retention and size budget", () => {
  let t: TestBridge;
  let s: AgentSession;
  const get = (route: string, params: Array<[string, string | number]> = [], raw?: string) =>
    agentGet<Body>(url(s.m!, route, params, raw));
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true });
  });
  afterAll(async () => t.close());

  it("drops the oldest contents past the size budget first, keeps paths and fingerprints, and says so", async () => {
    const old = await get("w", [["path", "old.txt"]], "o".repeat(3000));
    const recent = await get("w", [["path", "recent.txt"]], "r".repeat(3000));
    expect([old.ok, recent.ok]).toEqual([true, true]);
    const changes = t.bridge.store.changes;
    expect(changes.usage().bytes).toBe(6000);
    // A budget that holds one file's contents: the older change loses its contents, the newer keeps them.
    const dropped = changes.prune({ detailBefore: 0, maxBytes: 4000, forgetBefore: 0 });
    expect(dropped).toBeGreaterThanOrEqual(1);
    expect(changes.usage()).toMatchObject({ bytes: 3000, dropped: 1 });

    const set = await get("c");
    const files = set.files as Array<{ path: string; detailDropped?: boolean; after?: { size: number } }>;
    expect(files.find((f) => f.path === "/project/old.txt")).toMatchObject({
      detailDropped: true,
      after: { size: 3000 },
    });
    expect(files.find((f) => f.path === "/project/recent.txt")?.detailDropped).toBeUndefined();
    const diff = await get("c", [["path", "old.txt"]]);
    expect(diff).toMatchObject({ ok: true, files: [{ detailDropped: true }] });
    expect(diff.diff).toContain("Contents dropped past the review budget");
    // A created file reverts to nothing, which needs no contents; a revert of a replaced file would.
    expect(await get("n", [["path", "recent.txt"]])).toMatchObject({ ok: true });
    expect(fs.existsSync(path.join(t.projectDir, "recent.txt"))).toBe(false);
  });

  it("refuses to revert a change whose earlier contents were dropped (review_detail_dropped), writing nothing", async () => {
    await agentGet(url(s.r, "r", [["path", "old.txt"]]));
    const replaced = await get("w", [["path", "old.txt"]], "new\n");
    expect(replaced.ok).toBe(true);
    t.bridge.store.changes.prune({ detailBefore: Date.now() + 1, maxBytes: 1 << 30, forgetBefore: 0 });
    expect(await get("n", [["intent", replaced.callId!]])).toMatchObject({
      ok: false,
      errorCode: "review_detail_dropped",
    });
    expect(fs.readFileSync(path.join(t.projectDir, "old.txt"), "utf8")).toBe("new\n");
  });
});
