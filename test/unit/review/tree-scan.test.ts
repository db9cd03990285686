// The terminal checkpoint's walk (review/checkpoint/tree-scan.ts) takes turns with other callers of the event loop:
// a large folder's entries are lstat'ed in slices, not in one stretch (issue 34). Counted by turns, not by time.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SCAN_ENTRIES_PER_TURN, scanTree } from "../../../server/review/checkpoint/tree-scan.js";
import { makeTempDir } from "../../helpers/bridge.js";

const FILES = 8 * SCAN_ENTRIES_PER_TURN;

describe("tree scan", () => {
  it("lets the event loop serve others between slices of a large folder", async () => {
    const root = fs.realpathSync(makeTempDir("tree-scan-turns"));
    for (let i = 0; i < FILES; i += 1) fs.writeFileSync(path.join(root, `f${i}.txt`), `${i}\n`);
    // Another caller: something to do on every turn the loop gets while the scan runs.
    let turns = 0;
    let scanning = true;
    const other = () => {
      if (!scanning) return;
      turns += 1;
      setImmediate(other);
    };
    setImmediate(other);
    // Turns counted between the first file's visit and the last's: the stretch the lstats take.
    const atVisit: number[] = [];
    const summary = await scanTree(root, { maxFiles: 2 * FILES, maxBytes: 2 ** 30 }, () => {
      atVisit.push(turns);
    });
    scanning = false;
    expect(summary.files).toBe(FILES);
    expect(atVisit.at(-1)! - atVisit[0]!).toBeGreaterThanOrEqual(FILES / SCAN_ENTRIES_PER_TURN - 1);
  });
});
