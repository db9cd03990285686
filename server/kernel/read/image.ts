// Images in /r: a file whose first bytes carry a PNG, JPEG, GIF or WebP signature is an image, whatever its
// name (the extension is never trusted). read reports its MIME type, and with image=1 its bytes as base64.
import { MAX_IMAGE_BYTES } from "../limits.js";

/** The MIME type the first bytes announce, or undefined. */
export function imageTypeOf(head: Buffer): string | undefined {
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return "image/png";
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "image/jpeg";
  if (
    head.length >= 6 &&
    (head.subarray(0, 6).toString("latin1") === "GIF87a" || head.subarray(0, 6).toString("latin1") === "GIF89a")
  )
    return "image/gif";
  if (
    head.length >= 12 &&
    head.subarray(0, 4).toString("latin1") === "RIFF" &&
    head.subarray(8, 12).toString("latin1") === "WEBP"
  )
    return "image/webp";
  return undefined;
}

/** What a binary entry says about an image: its type, and its bytes as base64 when asked for and within the bound. */
export interface ImageFacts {
  mimeType: string;
  /** base64 of the very bytes the entry's fingerprint was taken of. */
  data?: string;
  tooLarge?: true;
}

/** The image facts of a file's bytes, or undefined when they carry no image signature. */
export function imageFactsOf(bytes: Buffer, wantData: boolean): ImageFacts | undefined {
  const mimeType = imageTypeOf(bytes.subarray(0, 16));
  if (!mimeType) return undefined;
  if (!wantData) return { mimeType };
  if (bytes.length > MAX_IMAGE_BYTES) return { mimeType, tooLarge: true };
  return { mimeType, data: bytes.toString("base64") };
}
