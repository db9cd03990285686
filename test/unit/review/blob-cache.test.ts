// The checkpoint cache's pack: blobs read back exactly, forgotten ones dropped, and the pack rewritten with only
// the live ones once the dead outweigh them.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BlobCache } from "../../../server/review/checkpoint/blob-cache.js";
import { contentHash } from "../../../server/store/changes.js";
import { makeTempDir } from "../../helpers/bridge.js";

describe("checkpoint blob cache", () => {
  it("reads back what it holds, and compacts its pack once forgotten blobs outweigh the kept ones", () => {
    const dir = path.join(makeTempDir("blob-cache"), "p");
    const cache = BlobCache.create(dir);
    const small = Buffer.from("kept\r\n\0\xff");
    const big = [Buffer.alloc(10 * 1024 * 1024, 1), Buffer.alloc(10 * 1024 * 1024, 2)];
    for (const blob of [big[0]!, small, big[1]!]) cache.put(contentHash(blob), blob);
    cache.put(contentHash(small), small);
    expect(cache.bytes).toBe(small.length + 20 * 1024 * 1024);
    expect(cache.get(contentHash(big[1]!))?.equals(big[1]!)).toBe(true);

    cache.retain(new Set([contentHash(small)]));
    expect(cache.bytes).toBe(small.length);
    expect(cache.has(contentHash(big[0]!))).toBe(false);
    expect(cache.get(contentHash(small))?.equals(small)).toBe(true);
    expect(fs.statSync(path.join(dir, "pack")).size).toBe(small.length);

    cache.drop();
    expect(fs.existsSync(dir)).toBe(false);
  });
});
