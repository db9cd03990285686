// Images for MCP read: a file the kernel's read called binary is returned as MCP image content when its bytes
// start with a PNG, JPEG, GIF or WebP signature and it is small enough; the extension is never trusted.
import { fingerprintBytes } from "../../kernel/read/read-coverage.js";
import type { ToolContext } from "../../kernel/tool/definition.js";
import { readHeldFile } from "../../sandbox/fd-ops.js";
import { withHeldPathAsync } from "../../sandbox/fd-walk.js";

/** Largest image returned as content: base64 grows it by a third, and common model APIs cap images near 5 MB. */
export const MAX_IMAGE_BYTES = 3 * 1024 * 1024;

export type ImageRead =
  | { kind: "image"; mimeType: string; data: string }
  | { kind: "too_large"; mimeType: string; limit: number }
  | { kind: "not_image" };

/** The MIME type the first bytes announce, or undefined. */
export function imageTypeOf(head: Buffer): string | undefined {
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "image/png";
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "image/jpeg";
  if (head.length >= 6 && (head.subarray(0, 6).toString("latin1") === "GIF87a" || head.subarray(0, 6).toString("latin1") === "GIF89a")) return "image/gif";
  if (head.length >= 12 && head.subarray(0, 4).toString("latin1") === "RIFF" && head.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  return undefined;
}

/**
 * Reads the file the kernel just described, through the same descriptor walk (containment, no symlink escape),
 * and returns it as an image only when it is still the version the kernel saw (same fingerprint).
 */
export async function readImage(ctx: ToolContext, path: string, fingerprint: string, size: number): Promise<ImageRead> {
  return withHeldPathAsync(ctx.project.root, path, { allowMissing: false }, async (target): Promise<ImageRead> => {
    if (!target.stats?.isFile()) return { kind: "not_image" };
    const head = await readHeldFile(target.fd!, Math.min(16, target.stats.size));
    const mimeType = imageTypeOf(head);
    if (!mimeType) return { kind: "not_image" };
    if (size > MAX_IMAGE_BYTES || target.stats.size > MAX_IMAGE_BYTES) return { kind: "too_large", mimeType, limit: MAX_IMAGE_BYTES };
    const bytes = await readHeldFile(target.fd!, target.stats.size);
    if (fingerprintBytes(bytes) !== fingerprint) return { kind: "not_image" };
    return { kind: "image", mimeType, data: bytes.toString("base64") };
  }).catch((): ImageRead => ({ kind: "not_image" }));
}
