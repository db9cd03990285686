import { describe, expect, it } from "vitest";
import {
  MAX_SNAPSHOTS_PER_SESSION,
  MAX_SNAPSHOT_BYTES_PER_SESSION,
  RANGE_PART_BYTES,
  ResponseSnapshots,
  SNAPSHOT_IDLE_TTL_MS,
  partBoundaries,
  sliceByOffset,
} from "../../../server/url-grammar/range-replay.js";

describe("ResponseSnapshots", () => {
  it("keeps at most 96 snapshots, evicting the least recently used", () => {
    const s = new ResponseSnapshots();
    for (let i = 0; i < MAX_SNAPSHOTS_PER_SESSION + 5; i++) s.add(`id${i}`, Buffer.from(`body${i}`));
    expect(s.size).toBe(MAX_SNAPSHOTS_PER_SESSION);
    expect(s.get("id0")).toBeUndefined();
    expect(s.get("id5")?.toString()).toBe("body5");
    expect(s.last()?.id).toBe(`id${MAX_SNAPSHOTS_PER_SESSION + 4}`);
  });

  it("keeps at most 2 MiB per session", () => {
    const s = new ResponseSnapshots();
    const big = Buffer.alloc(700 * 1024, 97);
    for (let i = 0; i < 4; i++) s.add(`b${i}`, big);
    expect(s.bytes).toBeLessThanOrEqual(MAX_SNAPSHOT_BYTES_PER_SESSION);
    expect(s.get("b0")).toBeUndefined();
    expect(s.get("b3")).toBeDefined();
  });

  it("expires snapshots after 15 idle minutes", () => {
    let now = 0;
    const s = new ResponseSnapshots(() => now);
    s.add("a", Buffer.from("x"));
    now += SNAPSHOT_IDLE_TTL_MS - 1;
    expect(s.get("a")).toBeDefined();
    now += SNAPSHOT_IDLE_TTL_MS + 1;
    expect(s.get("a")).toBeUndefined();
    expect(s.last()).toBeUndefined();
  });
});

describe("part boundaries", () => {
  it.each([0, 1, RANGE_PART_BYTES - 1, RANGE_PART_BYTES, RANGE_PART_BYTES + 1, 10_000])(
    "cover %i bytes of 4-byte characters without splitting one",
    (n) => {
      const body = Buffer.from("😀".repeat(Math.ceil(n / 4)), "utf8").subarray(0, n - (n % 4));
      const parts = partBoundaries(body);
      let cursor = 0;
      for (const [s, e] of parts) {
        expect(s).toBe(cursor);
        expect(e - s).toBeLessThanOrEqual(RANGE_PART_BYTES);
        expect(Buffer.from(body.subarray(s, e).toString("utf8"), "utf8").equals(body.subarray(s, e))).toBe(true);
        cursor = e;
      }
      expect(cursor).toBe(body.length);
    },
  );

  it("widens a window that falls inside one character to that character", () => {
    const body = Buffer.from("😀", "utf8");
    expect(sliceByOffset(body, 1, 1)).toMatchObject({ offset: 0, length: 4 });
  });
});
