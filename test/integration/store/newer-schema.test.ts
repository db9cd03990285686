// A rollback onto state a newer build migrated: the older bridge starts, serves, and says so in its log once.
import { describe, expect, it } from "vitest";
import { createLogger } from "../../../server/log.js";
import { openDatabase } from "../../../server/store/database.js";
import { makeTempDir, startTestBridge } from "../../helpers/bridge.js";

describe("state from a newer build", () => {
  it("warns about migrations this build does not have, and starts anyway", async () => {
    const stateDir = makeTempDir("newer-schema");
    const db = openDatabase(stateDir);
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
      999,
      "from-a-later-release",
      Date.now(),
    );
    db.close();
    const lines: string[] = [];
    const t = await startTestBridge({}, { stateDir, log: createLogger("warn", (line) => lines.push(line)) });
    try {
      expect((await t.api<{ ok: boolean }>("GET", "/api/health")).body.ok).toBe(true);
      const warned = lines.filter((l) => l.includes("used by a newer urlbridge"));
      expect(warned).toHaveLength(1);
      expect(warned[0]).toContain("999-from-a-later-release");
      expect(warned[0]).toContain("deploy/UPGRADE.md");
    } finally {
      await t.close();
    }
  });

  it("says nothing on state this build migrated itself", async () => {
    const lines: string[] = [];
    const t = await startTestBridge({}, { log: createLogger("warn", (line) => lines.push(line)) });
    await t.close();
    expect(lines.filter((l) => l.includes("newer urlbridge"))).toEqual([]);
  });
});
