// /r and images: a PNG, JPEG, GIF or WebP (judged by its signature) is a binary entry with its MIME type, and
// image=1 returns its bytes as base64 data, up to MAX_IMAGE_BYTES, taken from the bytes the fingerprint names.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_IMAGE_BYTES } from "../../../server/kernel/limits.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url, writeTree, type Params } from "./fixtures.js";

type Entry = Record<string, unknown> & {
  kind: string;
  notice?: string;
  data?: string;
  mimeType?: string;
  fingerprint?: string;
};
type Body = Record<string, unknown> & { files: Entry[] };

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from([0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]),
]);
/** A JPEG head without a NUL byte: the kernel's decoder calls it text with invalid UTF-8, the signature an image. */
const JPEG_NO_NUL = Buffer.from([0xff, 0xd8, 0xff, 0xdb, 0x43, 0x11, 0x22]);
const fingerprintOf = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex").slice(0, 32);

describe("read (/r) images", () => {
  let t: TestBridge;
  let s: AgentSession;
  const read = (params: Params) => agentGet<Body>(url(s.r, "r", params));

  beforeAll(async () => {
    t = await startTestBridge();
    writeTree(t.projectDir, {
      "pixel.png": PNG,
      "photo.jpg": JPEG_NO_NUL,
      "fake.png": Buffer.from([0x00, 0x01, 0x02, 0x03, 0x04]),
      "notes.txt": "plain text\n",
      "huge.gif": Buffer.concat([Buffer.from("GIF89a"), Buffer.alloc(MAX_IMAGE_BYTES, 0)]),
    });
    s = await t.session();
  });
  afterAll(async () => t.close());

  it("names an image's type without its bytes, and says which URL returns them", async () => {
    const body = await read([["path", "pixel.png"]]);
    const entry = body.files[0]!;
    expect(entry).toMatchObject({
      path: "/project/pixel.png",
      kind: "binary",
      size: PNG.length,
      fingerprint: fingerprintOf(PNG),
      mimeType: "image/png",
    });
    expect(entry.data).toBeUndefined();
    const offered = /Fetch (\S+) for its bytes/.exec(entry.notice ?? "")?.[1];
    expect(offered).toContain("image=1");
    const followed = await agentGet<Body>(offered!);
    expect(followed.files[0]).toMatchObject({ kind: "binary", mimeType: "image/png", data: PNG.toString("base64") });
  });

  it("returns the bytes as base64 with image=1, the version the fingerprint names", async () => {
    const first = (
      await read([
        ["path", "pixel.png"],
        ["image", 1],
      ])
    ).files[0]!;
    expect(first).toMatchObject({
      mimeType: "image/png",
      fingerprint: fingerprintOf(PNG),
      data: PNG.toString("base64"),
    });
    const changed = Buffer.concat([PNG, Buffer.from([0xff, 0x00])]);
    fs.writeFileSync(path.join(t.projectDir, "pixel.png"), changed);
    const second = (
      await read([
        ["path", "pixel.png"],
        ["image", 1],
      ])
    ).files[0]!;
    expect(second.fingerprint).toBe(fingerprintOf(changed));
    expect(Buffer.from(second.data!, "base64").equals(changed)).toBe(true);
    fs.writeFileSync(path.join(t.projectDir, "pixel.png"), PNG);
  });

  it("judges by signature: a JPEG without NUL bytes is an image, a .png that is not one is plain binary", async () => {
    const jpeg = (
      await read([
        ["path", "photo.jpg"],
        ["image", 1],
      ])
    ).files[0]!;
    expect(jpeg).toMatchObject({ kind: "binary", mimeType: "image/jpeg", data: JPEG_NO_NUL.toString("base64") });
    const fake = (
      await read([
        ["path", "fake.png"],
        ["image", 1],
      ])
    ).files[0]!;
    expect(fake).toMatchObject({ kind: "binary", notice: "Binary file (it contains NUL bytes); content not shown." });
    expect(fake.mimeType).toBeUndefined();
    expect(fake.data).toBeUndefined();
  });

  it("reads a text file as text with image=1", async () => {
    const text = (
      await read([
        ["path", "notes.txt"],
        ["image", 1],
      ])
    ).files[0]!;
    expect(text).toMatchObject({ kind: "file", content: "plain text\n" });
  });

  it("describes an image over the bound instead of returning it", async () => {
    const entry = (
      await read([
        ["path", "huge.gif"],
        ["image", 1],
      ])
    ).files[0]!;
    expect(entry).toMatchObject({ kind: "binary", mimeType: "image/gif", size: MAX_IMAGE_BYTES + 6 });
    expect(entry.data).toBeUndefined();
    expect(entry.notice).toContain(`over the ${MAX_IMAGE_BYTES}-byte bound of image=1`);
  });

  it("refuses image=1 with several paths, offering the first alone", async () => {
    const body = await agentGet<Record<string, unknown>>(
      url(s.r, "r", [
        ["path", "pixel.png"],
        ["path", "photo.jpg"],
        ["image", 1],
      ]),
    );
    expect(body).toMatchObject({ ok: false, errorCode: "invalid_parameter" });
    const repaired = await agentGet<Body>(body.repair as string);
    expect(repaired.files[0]).toMatchObject({ path: "/project/pixel.png", data: PNG.toString("base64") });
  });
});
