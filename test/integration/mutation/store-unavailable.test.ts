import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATE_FILE_NAME } from "../../../server/store/database.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string };

describe("a journal that cannot be written", () => {
  let t: TestBridge;
  let s: AgentSession;
  let holder: Database.Database;
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true });
    holder = new Database(path.join(t.stateDir, STATE_FILE_NAME));
  });
  afterAll(async () => {
    if (holder.open) holder.close();
    await t.close();
  });

  it("refuses a mutation with a retryable code and runs nothing while another process holds the write lock; the same URL runs once after", async () => {
    writeAsAgent(path.join(t.projectDir, "seen.txt"), "seen\n");
    const write = url(s.m!, "w", [["path", "locked.txt"]], "written once\n");
    holder.exec("BEGIN IMMEDIATE");
    try {
      const refused = await agentGet<Body>(write);
      expect(refused).toMatchObject({
        ok: false,
        errorCode: "state_store_unavailable",
        retryable: true,
        agentAction: "wait_and_retry",
        errorDetail: { store: "SQLITE_BUSY" },
      });
      expect(fs.existsSync(path.join(t.projectDir, "locked.txt"))).toBe(false);
      // Reads keep working while the journal is locked.
      expect(await agentGet<Body>(url(s.r, "r", [["path", "seen.txt"]]))).toMatchObject({ ok: true });
      // Their activity rows cannot be written either; /api/health says so while it lasts.
      t.bridge.store.activity.flush();
      expect((await t.api("GET", "/api/health")).body).toMatchObject({
        ok: true,
        degraded: true,
        store: {
          activityLog: { failing: true, lastError: { code: "SQLITE_BUSY" } },
          journal: { failing: true, lastError: { code: "SQLITE_BUSY" } },
        },
      });
    } finally {
      holder.exec("ROLLBACK");
    }
    t.bridge.store.activity.flush();
    // The journal's refusal clears by its own probe, on a timer, without a mutation having to arrive.
    let health = (await t.api<{ degraded: boolean }>("GET", "/api/health")).body;
    for (let i = 0; i < 100 && health.degraded; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      health = (await t.api<{ degraded: boolean }>("GET", "/api/health")).body;
    }
    expect(health).toMatchObject({
      ok: true,
      degraded: false,
      store: { activityLog: { failing: false, pending: 0 }, journal: { failing: false } },
    });
    const done = await agentGet<Body>(write);
    expect(done).toMatchObject({ ok: true, created: true });
    expect(await agentGet<Body>(write)).toMatchObject({ ok: true, dedupe: "replayed" });
    expect(fs.readFileSync(path.join(t.projectDir, "locked.txt"), "utf8")).toBe("written once\n");
  });

  it("refuses a staged write retryably (not internal_error) while the lock is held; the same URL runs once after", async () => {
    expect(
      await agentGet<Body>(
        url(
          s.m!,
          "s",
          [
            ["blob", "held"],
            ["i", 0],
            ["count", 1],
          ],
          "staged once\n",
        ),
      ),
    ).toMatchObject({ ok: true });
    const write = url(s.m!, "w", [
      ["path", "staged.txt"],
      ["blob", "held"],
      ["count", 1],
    ]);
    holder.exec("BEGIN IMMEDIATE");
    try {
      expect(await agentGet<Body>(write)).toMatchObject({
        ok: false,
        errorCode: "state_store_unavailable",
        retryable: true,
        errorDetail: { store: "SQLITE_BUSY" },
      });
      expect(fs.existsSync(path.join(t.projectDir, "staged.txt"))).toBe(false);
    } finally {
      holder.exec("ROLLBACK");
    }
    expect(await agentGet<Body>(write)).toMatchObject({ ok: true, created: true });
    expect(fs.readFileSync(path.join(t.projectDir, "staged.txt"), "utf8")).toBe("staged once\n");
  });
});
