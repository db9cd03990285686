// Pages of a diff text, as reads page a file: UTF-8 byte offsets cut at line ends, and a fingerprint of the whole
// text, so a page asked for with a fingerprint that no longer matches is refused instead of mixing two versions.
import { createHash } from "node:crypto";

/** Most UTF-8 bytes of diff one page returns unless the call asks for fewer. */
export const MAX_DIFF_PAGE_BYTES = 32 * 1024;
/** Fewest bytes a page may be asked for. */
export const MIN_DIFF_PAGE_BYTES = 1024;

export interface DiffPage {
  content: string;
  /** Byte offsets [offset, end) of this page in the whole diff; total is its size. */
  offset: number;
  end: number;
  total: number;
  /** sha256 prefix (32 hex digits) of the whole diff text. */
  fingerprint: string;
  complete: boolean;
}

export function fingerprintOf(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, 32);
}

/**
 * The page of `text` from byte `offset`, at most `max` bytes, ending after a newline unless one line alone is
 * longer (then cut at a character boundary). `offset` must be a page start this function returned (or 0).
 */
export function pageOf(text: string, offset: number, max: number): DiffPage {
  const bytes = Buffer.from(text, "utf8");
  const start = Math.min(offset, bytes.length);
  let end = Math.min(bytes.length, start + max);
  if (end < bytes.length) {
    const newline = bytes.lastIndexOf(0x0a, end - 1);
    if (newline >= start) end = newline + 1;
    else while (end > start && (bytes[end]! & 0xc0) === 0x80) end--;
  }
  return {
    content: bytes.subarray(start, end).toString("utf8"),
    offset: start,
    end,
    total: bytes.length,
    fingerprint: fingerprintOf(text),
    complete: end >= bytes.length,
  };
}
