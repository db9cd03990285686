// read (/r): exact text of up to 8 files (or directory listings) in one call, with line ranges, a fair
// share of one byte budget per file, and an exact next URL wherever a page stops short.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { shareRoot } from "../../sandbox/fd-walk.js";
import {
  MAX_IMAGE_BYTES,
  MAX_READ_BYTES,
  MAX_READ_LINE_LIMIT,
  MAX_READ_MAX_BYTES,
  MAX_READ_PATHS,
  MIN_READ_MAX_BYTES,
  READ_ENTRY_OVERHEAD_BYTES,
} from "../limits.js";
import { shareBudget } from "./read-budget.js";
import { readCoverage } from "./read-coverage.js";
import {
  readOutput,
  type ReadBinaryEntry,
  type ReadDirectoryEntry,
  type ReadEntry,
  type ReadFailure,
  type ReadFileEntry,
  type ReadOutput,
} from "./read-output.js";
import { formatLineSpan, pairRanges, type PathRange } from "./read-ranges.js";
import { loadTarget, renderTarget, type LoadedTarget, type RangeRequest, type RenderedTarget } from "./read-target.js";
import { defineTool, type ToolContext } from "../tool/definition.js";

const schema = z.object({
  path: z.array(z.string()).min(1),
  /** One range per path= by position (FROM-TO, FROM-, FROM:COL-[TO]); instead of offset/limit/col. */
  lines: z.array(z.string()).min(1).optional(),
  offset: z.number().int().min(1).max(MAX_READ_LINE_LIMIT).default(1),
  limit: z.number().int().min(1).max(MAX_READ_LINE_LIMIT).optional(),
  col: z.number().int().min(1).max(MAX_READ_LINE_LIMIT).default(1),
  /** Content bytes this call may return (the budget a multi-read shares); every next URL carries it on. */
  max: z.number().int().min(MIN_READ_MAX_BYTES).max(MAX_READ_MAX_BYTES).default(MAX_READ_BYTES),
  /** image=1: an image's bytes (PNG, JPEG, GIF, WebP by signature, up to MAX_IMAGE_BYTES) as base64 data; one path only. */
  image: z.boolean().default(false),
});

type ReadArgs = z.infer<typeof schema>;
type Params = Array<[string, string | number]>;

function rangeParams(range: { offset: number; col: number; limit?: number | undefined; max: number }): Params {
  const params: Params = [];
  if (range.offset !== 1) params.push(["offset", range.offset]);
  if (range.col !== 1) params.push(["col", range.col]);
  if (range.limit !== undefined) params.push(["limit", range.limit]);
  params.push(...maxParam(range.max));
  return params;
}

/** max= as a next URL carries it: only when the call asked for a page size other than the default. */
function maxParam(max: number): Params {
  return max === MAX_READ_BYTES ? [] : [["max", max]];
}

function tooManyPaths(args: ReadArgs, ctx: ToolContext): ToolError {
  const batches: string[] = [];
  for (let i = 0; i < args.path.length; i += MAX_READ_PATHS) {
    const paths = args.path
      .slice(i, i + MAX_READ_PATHS)
      .map((p, j): Params => [
        ["path", p],
        ...(args.lines?.[i + j] !== undefined ? [["lines", args.lines[i + j]!] as [string, string]] : []),
      ]);
    batches.push(ctx.urls.to("r", "r", [...paths.flat(), ...(args.lines ? maxParam(args.max) : rangeParams(args))]));
  }
  return new ToolError(
    ErrorCode.tooManyPaths,
    `One /r call reads up to ${MAX_READ_PATHS} paths; this one named ${args.path.length}. Fetch the repair URL for the first ${MAX_READ_PATHS}, then the other batches.`,
    { detail: { count: args.path.length, limit: MAX_READ_PATHS }, repair: batches[0], extra: { batches } },
  );
}

/** A file entry before content and complete are assigned (after startCol, which keeps them in that order). */
type FileEntryDraft = Omit<ReadFileEntry, "content" | "complete" | "rangeComplete"> &
  Partial<Pick<ReadFileEntry, "content" | "complete" | "rangeComplete">>;

/** What a file entry says of a text file, whether it was read whole or paged by range. */
function textFacts(target: Extract<LoadedTarget, { kind: "text" | "ranged" }>) {
  if (target.kind === "text") {
    const { file } = target;
    return {
      encoding: file.encoding,
      newline: target.index.newline,
      length: file.utf8.length,
      invalid: file.invalidUtf8,
    };
  }
  const { facts } = target;
  const encoding = facts.bomBytes === 0 ? ("utf-8" as const) : ("utf-8-bom" as const);
  return { encoding, newline: facts.index.newline, length: facts.index.length, invalid: facts.invalidUtf8 };
}

function fileEntry(
  target: Extract<LoadedTarget, { kind: "text" | "ranged" }>,
  rendered: Extract<RenderedTarget, { kind: "text" }>,
  next: string | undefined,
): ReadFileEntry {
  const { page } = rendered;
  const file = textFacts(target);
  // Optional fields are assigned in place rather than spread in: the common whole-page entry then costs
  // one object, and metadata still comes before the content a truncating reader may cut.
  const entry: FileEntryDraft = {
    path: target.display,
    kind: "file",
    encoding: file.encoding,
    newline: file.newline,
    size: target.size,
    fingerprint: target.fingerprint,
    totalLines: page.totalLines,
    startLine: page.startLine,
    endLine: page.endLine,
  };
  if (page.startCol !== 1) entry.startCol = page.startCol;
  entry.content = page.content;
  // complete: this content is the whole file; rangeComplete: the requested range was returned to its end.
  entry.complete = page.start === 0 && page.end === file.length;
  entry.rangeComplete = page.complete;
  if (!page.complete) entry.truncated = true;
  if (file.invalid) {
    entry.invalidUtf8 = true;
    entry.notice = "Some bytes are not valid UTF-8; they are shown as U+FFFD.";
  }
  if (page.splitLine !== undefined) {
    entry.splitLine = page.splitLine;
    entry.splitNotice = `Line ${page.splitLine} alone exceeds this page's allowance, so it was cut at a UTF-8 boundary; next continues at col=${page.resume?.col}.`;
  }
  if (next) entry.next = next;
  // content and complete were assigned above.
  return entry as ReadFileEntry;
}

function directoryEntry(
  target: Extract<LoadedTarget, { kind: "directory" }>,
  rendered: Extract<RenderedTarget, { kind: "directory" }>,
  next: string | undefined,
): ReadDirectoryEntry {
  const { page } = rendered;
  return {
    path: target.display,
    kind: "dir",
    totalEntries: page.totalEntries,
    startEntry: page.startEntry,
    endEntry: page.endEntry,
    entries: page.entries,
    complete: page.startEntry === 1 && page.endEntry === page.totalEntries,
    rangeComplete: page.complete,
    ...(page.complete ? {} : { truncated: true as const }),
    ...(next ? { next } : {}),
  };
}

function nextUrl(ctx: ToolContext, display: string, rendered: RenderedTarget, max: number): string | undefined {
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

export const readTool = defineTool({
  id: "read",
  route: "r",
  longRoutes: ["file", "files"],
  capability: "read",
  description: `Exact text of up to ${MAX_READ_PATHS} files (repeat path=), or a directory listing; offset/limit select lines, or lines=FROM-TO once per path= for a range each; max= (bytes, ${MIN_READ_MAX_BYTES}-${MAX_READ_MAX_BYTES}) sets the page size; follow next when a page stops short; image=1 returns a PNG/JPEG/GIF/WebP's bytes as base64.`,
  example: "/r?path=src/app.ts",
  schema,
  output: readOutput,
  url: { aliases: { file: "path", filePath: "path" } },
  async execute(args, ctx) {
    const shared: RangeRequest = { offset: args.offset, col: args.col, limit: args.limit };
    const pairs = pairRanges({
      paths: args.path,
      lines: args.lines,
      shared,
      sharedGiven: args.offset !== 1 || args.col !== 1 || args.limit !== undefined,
      urlFor: (list) => rangesUrl(ctx, list, args.max),
    });
    if (args.path.length > MAX_READ_PATHS) throw tooManyPaths(args, ctx);
    if (args.col !== 1 && args.path.length > 1) {
      throw new ToolError(
        ErrorCode.invalidParameter,
        "col= continues one split line, so it works with a single path=. Remove col or read one file.",
        {
          detail: { parameter: "col" },
          repair: ctx.urls.repair({ drop: ["col"] }),
        },
      );
    }
    if (args.image && args.path.length > 1) {
      throw new ToolError(
        ErrorCode.invalidParameter,
        `image=1 returns one image's bytes (up to ${MAX_IMAGE_BYTES} bytes), so it works with a single path=. Read each image in its own call.`,
        {
          detail: { parameter: "image" },
          repair: ctx.urls.to("r", "r", [
            ["path", args.path[0]!],
            ["image", 1],
          ]),
        },
      );
    }
    // One path and range named twice is read once; the same path with two ranges is read twice.
    const requested = pairs.length === 1 ? pairs : uniquePairs(pairs);
    const findUrl = (name: string) => ctx.urls.to("r", "f", [["name", name]]);
    const root = shareRoot(ctx.project.root);
    let loading: Array<Promise<LoadedTarget>>;
    try {
      // Each load walks (synchronously) before its first await, so the root may close once all have started.
      loading = requested.map((p) => loadTarget(root, p.path, p.range, findUrl, args.max, args.image));
    } finally {
      root.close();
    }
    const loaded = await Promise.all(loading);
    const single = loaded.length === 1;
    if (single && loaded[0]!.kind === "failed") throw loaded[0]!.error;
    // Requested paths are echoed in /project/... form whenever they resolve.
    const shown = new Map(requested.map((p, i) => [p.path, loaded[i]!.display ?? p.path]));

    // Two spellings of one path (with one range) are read once.
    const seen = new Set<string>();
    const targets: Array<{ target: LoadedTarget; range: RangeRequest }> = [];
    loaded.forEach((t, i) => {
      const range = requested[i]!.range;
      if (t.kind !== "failed") {
        const key = `${t.display}\0${formatLineSpan(range)}`;
        if (seen.has(key)) return;
        seen.add(key);
      }
      targets.push({ target: t, range });
    });
    const budget = single ? args.max : Math.max(0, args.max - READ_ENTRY_OVERHEAD_BYTES * targets.length);
    const rendered = new Array<RenderedTarget | undefined>(targets.length);
    shareBudget(
      targets.map((t) => t.target.demand),
      budget,
      (i, allowance) => {
        rendered[i] = renderTarget(targets[i]!.target, targets[i]!.range, allowance);
        return rendered[i]?.used ?? 0;
      },
    );
    return buildResult(
      args.path.map((p) => shown.get(p) ?? p),
      ctx,
      targets,
      rendered,
      args.max,
    );
  },
});

function uniquePairs(pairs: PathRange[]): PathRange[] {
  const seen = new Set<string>();
  return pairs.filter((p) => {
    const key = `${p.path}\0${formatLineSpan(p.range)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** One /r URL reading each path with its own range (lines= by position). */
function rangesUrl(ctx: ToolContext, pairs: PathRange[], max: number): string {
  const params: Params = pairs.flatMap((p): Params => [
    ["path", p.path],
    ["lines", formatLineSpan(p.range)],
  ]);
  return ctx.urls.to("r", "r", [...params, ...maxParam(max)]);
}

/** Where a page that stopped short continues, as a range of the same path. */
function resumeRange(rendered: RenderedTarget): RangeRequest | undefined {
  if (rendered.kind === "text") {
    const resume = rendered.page.resume;
    return resume ? { offset: resume.line, col: resume.col, limit: resume.limit } : undefined;
  }
  const resume = rendered.page.resume;
  return resume ? { offset: resume.entry, col: 1, limit: resume.limit } : undefined;
}

/** A binary file's entry: its size and fingerprint, and for an image its type and, when asked for, its bytes. */
function binaryEntry(ctx: ToolContext, target: Extract<LoadedTarget, { kind: "binary" }>): ReadBinaryEntry {
  const base = { path: target.display, kind: "binary" as const, size: target.size, fingerprint: target.fingerprint };
  const image = target.image;
  if (!image)
    return {
      ...base,
      complete: true,
      rangeComplete: true,
      notice: "Binary file (it contains NUL bytes); content not shown.",
    };
  const { mimeType } = image;
  if (image.data !== undefined)
    return {
      ...base,
      mimeType,
      complete: true,
      rangeComplete: true,
      notice: `${mimeType} image; data holds its bytes as base64.`,
      data: image.data,
    };
  if (image.tooLarge) {
    return {
      ...base,
      mimeType,
      complete: true,
      rangeComplete: true,
      notice: `${mimeType} image of ${target.size} bytes, over the ${MAX_IMAGE_BYTES}-byte bound of image=1; its bytes are not returned.`,
    };
  }
  const notice =
    target.size > MAX_IMAGE_BYTES
      ? `${mimeType} image of ${target.size} bytes; content not shown, and it is over the ${MAX_IMAGE_BYTES}-byte bound of image=1.`
      : `${mimeType} image; content not shown as text. Fetch ${ctx.urls.to("r", "r", [
          ["path", target.display],
          ["image", 1],
        ])} for its bytes as base64 data.`;
  return { ...base, mimeType, complete: true, rangeComplete: true, notice };
}

function buildResult(
  requestedPaths: string[],
  ctx: ToolContext,
  targets: Array<{ target: LoadedTarget; range: RangeRequest }>,
  rendered: Array<RenderedTarget | undefined>,
  max: number,
): ReadOutput {
  const coverage = readCoverage.of(ctx.state);
  const files: ReadEntry[] = [];
  const failures: ReadFailure[] = [];
  const returned = new Set<string>();
  const complete = new Set<string>();
  const incomplete = new Set<string>();
  const unreturned: string[] = [];
  const nexts: string[] = [];
  const continuations: PathRange[] = [];
  targets.forEach(({ target }, i) => {
    const out = rendered[i];
    if (target.kind === "failed") {
      unreturned.push(target.display ?? target.requested);
      const { ok: _ok, ...failure } = target.failure;
      failures.push({ path: target.display ?? target.requested, ...failure });
      return;
    }
    returned.add(target.display);
    if (target.kind === "binary") {
      complete.add(target.display);
      files.push(binaryEntry(ctx, target));
      return;
    }
    if (!out) return;
    const next = nextUrl(ctx, target.display, out, max);
    const resume = resumeRange(out);
    if (next && resume) {
      incomplete.add(target.display);
      nexts.push(next);
      continuations.push({ path: target.display, range: resume });
    } else {
      complete.add(target.display);
    }
    if ((target.kind === "text" || target.kind === "ranged") && out.kind === "text") {
      coverage.record(target.absolute, target.fingerprint, target.size, out.diskStart, out.diskEnd);
      files.push(fileEntry(target, out, next));
    } else if (target.kind === "directory" && out.kind === "directory") {
      files.push(directoryEntry(target, out, next));
    }
  });
  // A path read in two ranges is complete only when both are.
  for (const p of incomplete) complete.delete(p);
  return {
    ok: true as const,
    requestedPaths,
    returnedPaths: [...returned],
    allComplete: incomplete.size === 0 && unreturned.length === 0,
    completePaths: [...complete],
    incompletePaths: [...incomplete],
    unreturnedPaths: unreturned,
    ...(nexts.length > 0 ? { truncated: true as const } : {}),
    ...(nexts.length === 1 ? { next: nexts[0] } : {}),
    // Several pages stopped short: one URL continues all of them, each path with its own range.
    ...(nexts.length > 1
      ? {
          next: rangesUrl(ctx, continuations, max),
          notice:
            "Several files stopped short; next continues all of them in one call (each entry's next continues one).",
        }
      : {}),
    files,
    ...(failures.length > 0 ? { failures } : {}),
  };
}
