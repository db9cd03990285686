// Issue 34: one session paging a large file must not stall the others. A page of a file over RANGED_READ_MIN_BYTES
// is cut from its byte range, and the file's index is built by a scan that reads it through the thread pool in
// chunks, so other calls are answered between the chunks. Counted, not timed (as outline-worker.test.ts does):
// how many /r of another session are answered while the pages of a 16 MiB file are being read. With the whole
// file read, hashed and indexed on the event loop for every page, only those slipping in between pages were.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LARGE_FILE_SCAN_CHUNK_BYTES, MAX_TEXT_FILE_BYTES } from "../../../server/kernel/limits.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

/** Pages of the large file the first session reads; each is a fresh version of the file, so each is scanned. */
const PAGES = 4;
/**
 * /r answers of the other session while those pages are read, at least: one per page would be what slips in
 * between whole-file pages; a scan offers a turn per chunk (16 per page here). Measured (load ~25): 39 with the
 * scan, 3 with every page read, hashed and indexed whole on the event loop.
 */
const ANSWERED_MEANWHILE = 3 * PAGES;

type Body = { ok: boolean; files: Array<{ content: string; startLine: number }>; next?: string };

describe("/r of a large file beside another session", () => {
  let t: TestBridge;
  let pager: AgentSession;
  let other: AgentSession;
  const line = (i: number) => `${String(i).padStart(8, "0")} ${"z".repeat(70)}\n`;
  const lines = Math.floor(MAX_TEXT_FILE_BYTES / line(0).length);

  beforeAll(async () => {
    t = await startTestBridge();
    fs.writeFileSync(path.join(t.projectDir, "small.txt"), "small\n");
    pager = await t.session({ name: "pager" });
    other = await t.session({ name: "other" });
  });
  afterAll(async () => t.close());

  it("answers another session between the chunks of each page's scan", { timeout: 120_000 }, async () => {
    expect(MAX_TEXT_FILE_BYTES / LARGE_FILE_SCAN_CHUNK_BYTES).toBeGreaterThanOrEqual(16);
    const file = path.join(t.projectDir, "big.log");
    let pending = true;
    const paging = (async () => {
      for (let page = 0; page < PAGES; page++) {
        // A new version each time (written just now, so never cached): every page scans the file again.
        fs.writeFileSync(file, Array.from({ length: lines }, (_, i) => line(page * lines + i + 1)).join(""));
        const offset = 1 + page * 1000;
        const body = await agentGet<Body>(
          url(pager.r, "r", [
            ["path", "big.log"],
            ["offset", offset],
          ]),
        );
        expect(body.files[0]).toMatchObject({ startLine: offset, content: expect.stringMatching(/^\d{8} z/) });
        expect(body.files[0]!.content.startsWith(line(page * lines + offset))).toBe(true);
      }
    })().finally(() => (pending = false));
    let answered = 0;
    while (pending) {
      expect(await agentGet(url(other.r, "r", [["path", "small.txt"]]))).toMatchObject({ ok: true });
      if (pending) answered++;
    }
    await paging;
    console.log(`another session's /r answered ${answered} times while ${PAGES} pages of a 16 MiB file were read`);
    expect(answered).toBeGreaterThanOrEqual(ANSWERED_MEANWHILE);
  });
});
