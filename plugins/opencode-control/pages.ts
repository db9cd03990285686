// Fingerprinted pages of lists and long texts: each page names the fingerprint of the whole source, and a later
// page must quote it; a source that changed in between is refused (page_changed) instead of skipping or repeating
// rows. Offsets of texts count UTF-16 code units, as JavaScript strings do.
import { createHash } from "node:crypto";
import { z } from "zod";
import { ErrorCode, ToolError } from "../../server/errors.js";
import { PAGE_DEFAULT, PAGE_MAX, TEXT_PAGE_CHARS } from "./settings.js";

export const pageFields = {
  offset: z
    .number()
    .int()
    .min(0)
    .max(100_000)
    .optional()
    .describe("Rows to skip; a later page also needs fingerprint."),
  limit: z
    .number()
    .int()
    .min(1)
    .max(PAGE_MAX)
    .optional()
    .describe(`Rows per page (default ${PAGE_DEFAULT}, at most ${PAGE_MAX}).`),
  fingerprint: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .optional()
    .describe("The fingerprint of the first page: refuses a list that changed."),
};

export const textFields = {
  textOffset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Where the text page starts (UTF-16 units); needs textFingerprint when not 0."),
  textFingerprint: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .optional(),
};

export function fingerprintOf(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
}

export interface Page<T> {
  items: T[];
  page: { offset: number; limit: number; total: number; fingerprint: string; nextOffset?: number };
}

function assertFingerprint(at: number, given: string | undefined, actual: string, what: string): void {
  if (at === 0 && given === undefined) return;
  if (given === undefined) {
    throw new ToolError(
      ErrorCode.missingParameter,
      `A ${what} page after the first needs the fingerprint the first page answered; fetch the next URL it gave.`,
      { detail: { parameter: "fingerprint" } },
    );
  }
  if (given !== actual) {
    throw new ToolError(
      ErrorCode.pageChanged,
      `The ${what} changed since that page was read (fingerprint ${given}, now ${actual}); read it again from the start.`,
      { detail: { expected: given, actual } },
    );
  }
}

/** One page of `items`, whose identity (for the fingerprint) is keyOf of each row in order. */
export function pageOf<T>(
  items: T[],
  keyOf: (item: T) => unknown,
  args: { offset?: number | undefined; limit?: number | undefined; fingerprint?: string | undefined },
  what = "list",
): Page<T> {
  const fingerprint = fingerprintOf(items.map(keyOf));
  const offset = args.offset ?? 0;
  assertFingerprint(offset, args.fingerprint, fingerprint, what);
  const limit = args.limit ?? PAGE_DEFAULT;
  const slice = items.slice(offset, offset + limit);
  const nextOffset = offset + slice.length < items.length ? offset + slice.length : undefined;
  return {
    items: slice,
    page: { offset, limit, total: items.length, fingerprint, ...(nextOffset !== undefined ? { nextOffset } : {}) },
  };
}

export interface TextPage {
  text: string;
  textOffset: number;
  textLength: number;
  textFingerprint: string;
  textComplete: boolean;
  nextTextOffset?: number;
}

export function textPageOf(
  text: string,
  args: { textOffset?: number | undefined; textFingerprint?: string | undefined },
): TextPage {
  const textFingerprint = fingerprintOf(text);
  const textOffset = args.textOffset ?? 0;
  assertFingerprint(textOffset, args.textFingerprint, textFingerprint, "text");
  let end = Math.min(text.length, textOffset + TEXT_PAGE_CHARS);
  // Never split a surrogate pair across pages.
  if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1] ?? "")) end -= 1;
  const slice = text.slice(textOffset, end);
  const complete = end >= text.length;
  return {
    text: slice,
    textOffset,
    textLength: text.length,
    textFingerprint,
    textComplete: complete,
    ...(complete ? {} : { nextTextOffset: end }),
  };
}
