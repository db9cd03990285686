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
import { readOutput } from "./read-output.js";
import { buildResult } from "./read-result.js";
import { formatLineSpan, pairRanges, type PathRange } from "./read-ranges.js";
import { loadTarget, renderTarget, type LoadedTarget, type RangeRequest, type RenderedTarget } from "./read-target.js";
import { maxParam, rangeParams, rangesUrl, type Params } from "./read-urls.js";
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
