// The URLs a read (/r) answer offers: where a page that stopped short continues (one path, or all of them in one
// call, each with its own range), carrying the call's max= when it was not the default.
import { MAX_READ_BYTES } from "../limits.js";
import { formatLineSpan, type PathRange } from "./read-ranges.js";
import type { RangeRequest, RenderedTarget } from "./read-target.js";
import type { ToolContext } from "../tool/definition.js";

export type Params = Array<[string, string | number]>;

export function rangeParams(range: { offset: number; col: number; limit?: number | undefined; max: number }): Params {
  const params: Params = [];
  if (range.offset !== 1) params.push(["offset", range.offset]);
  if (range.col !== 1) params.push(["col", range.col]);
  if (range.limit !== undefined) params.push(["limit", range.limit]);
  params.push(...maxParam(range.max));
  return params;
}

/** max= as a next URL carries it: only when the call asked for a page size other than the default. */
export function maxParam(max: number): Params {
  return max === MAX_READ_BYTES ? [] : [["max", max]];
}

export function nextUrl(ctx: ToolContext, display: string, rendered: RenderedTarget, max: number): string | undefined {
  if (rendered.kind === "text") {
    const resume = rendered.page.resume;
    if (!resume) return undefined;
    return ctx.urls.to("r", "r", [
      ["path", display],
      ["offset", resume.line],
      ...(resume.col !== 1 ? [["col", resume.col] as [string, number]] : []),
      ...(resume.limit !== undefined ? [["limit", resume.limit] as [string, number]] : []),
      ...maxParam(max),
    ]);
  }
  const resume = rendered.page.resume;
  if (!resume) return undefined;
  return ctx.urls.to("r", "r", [
    ["path", display],
    ["offset", resume.entry],
    ...(resume.limit !== undefined ? [["limit", resume.limit] as [string, number]] : []),
    ...maxParam(max),
  ]);
}

/** One /r URL reading each path with its own range (lines= by position). */
export function rangesUrl(ctx: ToolContext, pairs: PathRange[], max: number): string {
  const params: Params = pairs.flatMap((p): Params => [
    ["path", p.path],
    ["lines", formatLineSpan(p.range)],
  ]);
  return ctx.urls.to("r", "r", [...params, ...maxParam(max)]);
}

/** Where a page that stopped short continues, as a range of the same path. */
export function resumeRange(rendered: RenderedTarget): RangeRequest | undefined {
  if (rendered.kind === "text") {
    const resume = rendered.page.resume;
    return resume ? { offset: resume.line, col: resume.col, limit: resume.limit } : undefined;
  }
  const resume = rendered.page.resume;
  return resume ? { offset: resume.entry, col: 1, limit: resume.limit } : undefined;
}
