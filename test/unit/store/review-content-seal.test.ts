// Review contents sealed in slices (capability-key.ts sealBytesInSlices, the review record's chunks) have, put back
// together, the very form sealBytes gives them: what either seals the other's reader opens, rows sealed whole still
// open, and the large seal lets other callbacks run between its slices.
import { createCipheriv, hkdfSync, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createCapabilitySealer, SEAL_SLICE_BYTES } from "../../../server/store/capability-key.js";

const root = randomBytes(32);
const sealer = createCapabilitySealer(root);
// The content subkey is private to the sealer: derived here the way capability-key.ts derives it.
const contentSubkey = Buffer.from(hkdfSync("sha256", root, Buffer.alloc(0), "urlbridge review content seal v1", 32));
const large = randomBytes(3 * SEAL_SLICE_BYTES + 123);

/** The header, then the slices in the order they came: what the review record puts back together. */
async function sealInSlices(content: Buffer): Promise<Buffer> {
  const slices: Buffer[] = [];
  const header = await sealer.sealBytesInSlices(content, (slice, index) => {
    expect(index).toBe(slices.length);
    expect(slice.length).toBeLessThanOrEqual(SEAL_SLICE_BYTES);
    slices.push(slice);
  });
  return Buffer.concat([header, ...slices]);
}

describe("review contents sealed in slices", () => {
  it.each([
    ["empty", Buffer.alloc(0)],
    ["one slice", randomBytes(1000)],
    ["several slices and a partial one", large],
    ["exactly two slices", randomBytes(2 * SEAL_SLICE_BYTES)],
  ])("opens %s as sealBytes' own form: iv (12) | tag (16) | ciphertext", async (_, content) => {
    const sealed = await sealInSlices(content);
    expect(sealed.length).toBe(12 + 16 + content.length);
    expect(sealer.openBytes(sealed)?.equals(content)).toBe(true);
    // The same iv and key give the same ciphertext and tag as one whole-buffer AES-GCM pass (the old form).
    expect(sealed.equals(reseal(sealed, content))).toBe(true);
  });

  it("still opens contents sealed whole (rows recorded before sealing in turns)", () => {
    expect(sealer.openBytes(sealer.sealBytes(large))?.equals(large)).toBe(true);
  });

  it("refuses a value altered or sealed under another key", async () => {
    const sealed = await sealInSlices(large);
    const altered = Buffer.from(sealed);
    altered.writeUInt8(altered.readUInt8(altered.length - 1) ^ 1, altered.length - 1);
    expect(sealer.openBytes(altered)).toBeUndefined();
    expect(createCapabilitySealer(randomBytes(32)).openBytes(sealed)).toBeUndefined();
  });

  it("lets other callbacks run between its slices", async () => {
    let turns = 0;
    let counting = true;
    const count = () => {
      if (!counting) return;
      turns += 1;
      setImmediate(count);
    };
    setImmediate(count);
    await sealInSlices(large);
    counting = false;
    expect(turns).toBeGreaterThanOrEqual(3);
  });
});

/** A whole-buffer AES-GCM seal with the sealed value's own iv, under the content subkey sealBytes derives. */
function reseal(sealed: Buffer, content: Buffer): Buffer {
  const iv = sealed.subarray(0, 12);
  const cipher = createCipheriv("aes-256-gcm", contentSubkey, iv).setAAD(
    Buffer.from("urlbridge review content v1", "utf8"),
  );
  const body = Buffer.concat([cipher.update(content), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}
