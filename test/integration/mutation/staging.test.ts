import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MAX_BLOB_BYTES,
  MAX_BLOBS_PER_SESSION,
  MAX_CHUNK_BYTES,
  MAX_STAGED_BYTES_PER_SESSION,
  STAGED_IDLE_TTL_MS,
  Staging,
} from "../../../server/mutation/staging/staging.js";
import { openStore } from "../../../server/store/index.js";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string };

describe("staging (/s) and blob status (/b)", () => {
  let t: TestBridge;
  let s: AgentSession;
  const stage = (blob: string, i: number, count: number, chunk: string) =>
    agentGet<Body>(
      url(
        s.m!,
        "s",
        [
          ["blob", blob],
          ["i", i],
          ["count", count],
        ],
        chunk,
      ),
    );
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true });
  });
  afterAll(async () => t.close());

  it("acknowledges each chunk with an exact statusUrl and deduplicates an identical replay", async () => {
    const first = await stage("replay", 0, 2, "hello ");
    expect(first).toMatchObject({
      ok: true,
      blob: "replay",
      index: 0,
      count: 2,
      received: 1,
      missing: [1],
      complete: false,
      deduplicated: false,
      statusUrl: url(s.m!, "b", [["blob", "replay"]]),
    });
    const again = await stage("replay", 0, 2, "hello ");
    expect(again).toMatchObject({ ok: true, deduplicated: true, received: 1, bytes: 6 });
    expect(await stage("replay", 1, 2, "world")).toMatchObject({ complete: true, bytes: 11 });
    expect(await agentGet<Body>(first.statusUrl as string)).toMatchObject({
      ok: true,
      count: 2,
      received: [0, 1],
      missing: [],
      complete: true,
      bytes: 11,
      preview: "hello ",
    });
  });

  it.each([
    ["different content at a used index", ["conflict", 0, 2, "other"], "staged_chunk_conflict"],
    ["a changed count", ["conflict", 1, 3, "x"], "staged_count_mismatch"],
    ["an index outside the declared count", ["conflict", 2, 2, "x"], "staged_index_out_of_range"],
    ["a negative index", ["fresh", -1, 2, "x"], "staged_index_out_of_range"],
    ["a count above 64", ["fresh", 0, 65, "x"], "invalid_parameter"],
  ] as Array<[string, [string, number, number, string], string]>)("refuses %s at once", async (_name, args, code) => {
    await stage("conflict", 0, 2, "original");
    expect(await stage(...args)).toMatchObject({ ok: false, errorCode: code });
    expect(await agentGet<Body>(url(s.m!, "b", [["blob", "conflict"]]))).toMatchObject({
      count: 2,
      received: [0],
      bytes: 8,
    });
  });

  it("refuses to assemble a blob with a missing chunk or another count, pointing at its status", async () => {
    await stage("holey", 0, 3, "a");
    await stage("holey", 2, 3, "c");
    const missing = await agentGet<Body>(
      url(s.m!, "w", [
        ["path", "holey.txt"],
        ["blob", "holey"],
      ]),
    );
    expect(missing).toMatchObject({
      ok: false,
      errorCode: "staged_blob_incomplete",
      errorDetail: { missing: [1] },
      statusUrl: url(s.m!, "b", [["blob", "holey"]]),
    });
    const miscounted = await agentGet<Body>(
      url(s.m!, "w", [
        ["path", "holey.txt"],
        ["blob", "holey"],
        ["count", 2],
      ]),
    );
    expect(miscounted).toMatchObject({
      ok: false,
      errorCode: "staged_count_mismatch",
      errorDetail: { declared: 3, received: 2 },
    });
    expect(
      await agentGet<Body>(
        url(s.m!, "w", [
          ["path", "holey.txt"],
          ["blob", "nope"],
        ]),
      ),
    ).toMatchObject({ ok: false, errorCode: "staged_blob_not_found" });
    expect(fs.existsSync(path.join(t.projectDir, "holey.txt"))).toBe(false);
  });

  it("refuses a blob larger than 160 KiB", async () => {
    const chunk = "a".repeat(MAX_CHUNK_BYTES);
    const chunks = MAX_BLOB_BYTES / MAX_CHUNK_BYTES;
    for (let i = 0; i < chunks; i++) expect(await stage("huge", i, chunks + 1, chunk)).toMatchObject({ ok: true });
    expect(await stage("huge", chunks, chunks + 1, "x")).toMatchObject({
      ok: false,
      errorCode: "staged_blob_too_large",
    });
  });

  it("evicts the least recently used unrelated blobs beyond 2 MiB per session", async () => {
    const own = await t.session({ write: true, root: t.projectDir, name: "evict-bytes" });
    const put = (blob: string, i: number, count: number, chunk: string) =>
      agentGet<Body>(
        url(
          own.m!,
          "s",
          [
            ["blob", blob],
            ["i", i],
            ["count", count],
          ],
          chunk,
        ),
      );
    const chunk = "b".repeat(MAX_CHUNK_BYTES);
    const perBlob = MAX_BLOB_BYTES / MAX_CHUNK_BYTES;
    const fullBlobs = Math.floor(MAX_STAGED_BYTES_PER_SESSION / MAX_BLOB_BYTES);
    for (let b = 0; b < fullBlobs; b++) for (let i = 0; i < perBlob; i++) await put(`full${b}`, i, perBlob, chunk);
    // Replaying a chunk of full0 uses it again, so full1 is now the least recently used.
    await put("full0", 0, perBlob, chunk);
    const evictions: string[] = [];
    for (let i = 0; i < perBlob; i++)
      evictions.push(...(((await put("next", i, perBlob, chunk)).evicted as string[]) ?? []));
    expect(evictions).toEqual(["full1"]);
    const listed = await agentGet<{ blobs: Array<{ blob: string }>; totalBytes: number }>(url(own.m!, "b"));
    expect(listed.blobs.map((b) => b.blob).sort()).toEqual(
      [...Array.from({ length: fullBlobs }, (_, b) => `full${b}`).filter((n) => n !== "full1"), "next"].sort(),
    );
    expect(listed.totalBytes).toBeLessThanOrEqual(MAX_STAGED_BYTES_PER_SESSION);
    expect(await agentGet<Body>(url(own.m!, "b", [["blob", "full1"]]))).toMatchObject({
      ok: false,
      errorCode: "staged_blob_not_found",
    });
  });

  it("evicts the oldest blob beyond 128 blobs per session, and sessions do not share blobs", async () => {
    const own = await t.session({ write: true, root: t.projectDir, name: "evict-count" });
    const put = (blob: string) =>
      agentGet<Body>(
        url(
          own.m!,
          "s",
          [
            ["blob", blob],
            ["i", 0],
            ["count", 1],
          ],
          blob,
        ),
      );
    for (let b = 0; b < MAX_BLOBS_PER_SESSION; b++) await put(`b${b}`);
    expect(await put("one-more")).toMatchObject({ ok: true, evicted: ["b0"] });
    expect((await agentGet<{ blobs: unknown[] }>(url(own.m!, "b"))).blobs).toHaveLength(MAX_BLOBS_PER_SESSION);
    expect(await agentGet<Body>(url(s.m!, "b", [["blob", "one-more"]]))).toMatchObject({
      ok: false,
      errorCode: "staged_blob_not_found",
    });
  });
});

describe("staging expiry", () => {
  it("drops blobs idle for 30 minutes, kept in the SQLite state file", () => {
    const store = openStore(makeTempDir("staging-state"));
    try {
      store.projects.insert({ id: "p", name: "p", root: "/tmp", write: true, terminal: false });
      store.sessions.insert({ id: "s", projectId: "p", name: "s", enabled: true, generation: 1 });
      let now = 1_000_000;
      const staging = new Staging(store, () => now);
      const scope = { sessionId: "s", generation: 1 };
      staging.stage(scope, { blob: "idle", index: 0, count: 1, content: "x" });
      now += STAGED_IDLE_TTL_MS - 1;
      expect(staging.status(scope, "idle")).toMatchObject({ complete: true, idleExpiresInSeconds: 0 });
      staging.stage(scope, { blob: "fresh", index: 0, count: 1, content: "y" });
      now += 2;
      expect(staging.status(scope, "idle")).toBeUndefined();
      expect(staging.status(scope, "fresh")).toMatchObject({ complete: true });
    } finally {
      store.close();
    }
  });
});
