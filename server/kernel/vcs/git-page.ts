// Fingerprinted pages of /v answers: each page carries the fingerprint of the whole list or text it was cut from,
// and a later page must quote it; a repository that changed in between is refused (page_changed) rather than a
// page skipping or repeating rows. Text offsets count UTF-16 code units, as JavaScript strings do.
import { createHash } from "node:crypto";
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { DEFAULT_GIT_PAGE, GIT_TEXT_PAGE_CHARS } from "../limits.js";
import type { ToolContext } from "../tool/definition.js";

export const FINGERPRINT_PATTERN = /^[0-9a-f]{16}$/;

export function fingerprintOf(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
}

export const pageOutput = z
  .strictObject({
    offset: z.number().int().min(0).describe("Rows (or, for text, UTF-16 units) before this page."),
    total: z.number().int().min(0).optional().describe("Rows (or text units) in the whole answer, when known."),
    fingerprint: z
      .string()
      .describe("Identifies the whole answer; a later page quotes it and is refused if it changed."),
    nextOffset: z.number().int().min(0).optional().describe("Present when more follows: the next page's offset."),
    next: z.string().optional().describe("Exact URL of the next page (offset and fingerprint set)."),
  })
  .describe("Where this page lies in the whole answer.");

export type PageInfo = z.infer<typeof pageOutput>;

export interface PageArgs {
  offset: number;
  fingerprint?: string | undefined;
}

/** Refuses a later page without the first page's fingerprint, or one whose source changed since. */
export function checkFingerprint(args: PageArgs, actual: string, what: string): void {
  if (args.offset === 0 && args.fingerprint === undefined) return;
  if (args.fingerprint === undefined) {
    throw new ToolError(
      ErrorCode.missingParameter,
      `A page of the ${what} after the first needs fingerprint= from the first page; fetch the next URL it gave.`,
      { detail: { parameter: "fingerprint" } },
    );
  }
  if (args.fingerprint !== actual) {
    throw new ToolError(
      ErrorCode.pageChanged,
      `The ${what} changed since that page was read (fingerprint ${args.fingerprint}, now ${actual}); read it again from offset 0 without a fingerprint.`,
      { detail: { expected: args.fingerprint, actual } },
    );
  }
}

function nextUrl(ctx: ToolContext, nextOffset: number, fingerprint: string): string | undefined {
  return ctx.urls.repair({
    drop: ["offset", "fingerprint"],
    add: [
      ["offset", String(nextOffset)],
      ["fingerprint", fingerprint],
    ],
  });
}

function pageInfo(
  ctx: ToolContext,
  offset: number,
  fingerprint: string,
  total: number | undefined,
  nextOffset: number | undefined,
): PageInfo {
  const next = nextOffset === undefined ? undefined : nextUrl(ctx, nextOffset, fingerprint);
  return {
    offset,
    ...(total !== undefined ? { total } : {}),
    fingerprint,
    ...(nextOffset !== undefined ? { nextOffset } : {}),
    ...(next ? { next } : {}),
  };
}

/** One page of `rows`; the fingerprint covers every row, or `identity` when given (a whole diff, not only its file list). */
export function pageRows<T>(
  rows: T[],
  args: PageArgs & { limit?: number | undefined },
  ctx: ToolContext,
  what: string,
  identity: unknown = rows,
): { rows: T[]; page: PageInfo } {
  const fingerprint = fingerprintOf(identity);
  checkFingerprint(args, fingerprint, what);
  const limit = args.limit ?? DEFAULT_GIT_PAGE;
  const slice = rows.slice(args.offset, args.offset + limit);
  const end = args.offset + slice.length;
  return {
    rows: slice,
    page: pageInfo(ctx, args.offset, fingerprint, rows.length, end < rows.length ? end : undefined),
  };
}

/** A page of rows whose whole list is not read (the log): `fingerprint` identifies it, `more` says whether rows follow. */
export function pageOpen<T>(
  rows: T[],
  args: PageArgs,
  fingerprint: string,
  more: boolean,
  ctx: ToolContext,
): { rows: T[]; page: PageInfo } {
  return {
    rows,
    page: pageInfo(ctx, args.offset, fingerprint, undefined, more ? args.offset + rows.length : undefined),
  };
}

/** One page of a text; the fingerprint covers the whole text. Never splits a surrogate pair. */
export function pageText(
  text: string,
  args: PageArgs,
  ctx: ToolContext,
  what: string,
): { text: string; page: PageInfo } {
  const fingerprint = fingerprintOf(text);
  checkFingerprint(args, fingerprint, what);
  let end = Math.min(text.length, args.offset + GIT_TEXT_PAGE_CHARS);
  if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1] ?? "")) end -= 1;
  return {
    text: text.slice(args.offset, end),
    page: pageInfo(ctx, args.offset, fingerprint, text.length, end < text.length ? end : undefined),
  };
}
