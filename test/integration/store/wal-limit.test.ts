// The state file's WAL is cut back after a burst: one large transaction grows it past the limit, and the next
// checkpoint that resets it truncates the file to WAL_SIZE_LIMIT_BYTES instead of keeping the high-water mark.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase, openLogConnection, WAL_SIZE_LIMIT_BYTES } from "../../../server/store/database.js";
import { makeTempDir } from "../../helpers/bridge.js";

describe("WAL size limit", () => {
  it("is set on both connections and shrinks the WAL after a burst larger than the limit", () => {
    const dir = makeTempDir("wal-limit");
    const db = openDatabase(dir);
    const log = openLogConnection(dir);
    try {
      expect(db.pragma("journal_size_limit", { simple: true })).toBe(WAL_SIZE_LIMIT_BYTES);
      expect(log.pragma("journal_size_limit", { simple: true })).toBe(WAL_SIZE_LIMIT_BYTES);
      const wal = fs
        .readdirSync(dir)
        .map((f) => path.join(dir, f))
        .find((f) => f.endsWith("-wal"))!;
      db.exec("CREATE TABLE burst (x BLOB)");
      const insert = db.prepare("INSERT INTO burst (x) VALUES (?)");
      const blob = Buffer.alloc(64 * 1024, 7);
      db.transaction(() => {
        // One transaction past the limit by a quarter.
        for (let i = 0; i < (WAL_SIZE_LIMIT_BYTES * 1.25) / blob.length; i++) insert.run(blob);
      })();
      expect(fs.statSync(wal).size).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES);
      db.pragma("wal_checkpoint(PASSIVE)");
      db.prepare("INSERT INTO burst (x) VALUES (?)").run(Buffer.alloc(16)); // the next write resets the WAL
      db.pragma("wal_checkpoint(PASSIVE)");
      expect(fs.statSync(wal).size).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
    } finally {
      log.close();
      db.close();
    }
  });
});
