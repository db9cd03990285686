// outline (/o): imports and named declarations of a source file with line numbers, so an agent can read only
// the ranges it needs: JS/TS from the TypeScript compiler's parser, Python, Go, Rust and Java from tree-sitter.
import path from "node:path";
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { readHeldFile } from "../../sandbox/fd-ops.js";
import { walkInsideRoot } from "../../sandbox/fd-walk.js";
import { MAX_OUTLINE_ENTRIES, MAX_OUTLINE_FILE_BYTES, MAX_OUTLINE_MS } from "../limits.js";
import { DeadlineWorker } from "../worker/deadline-worker.js";
import { workerEntry } from "../worker/worker-entry.js";
import type { OutlineJob } from "./outline-parse.js";
import { outlineDeclaration, outlineImport, type Outline } from "./outline-schema.js";
import type { TreeSitterLanguage } from "./outline-tree-sitter.js";
import { decodeLossy, indexLines } from "../../text/index.js";
import { defineTool } from "../tool/definition.js";

type Parsed =
  | { language: OutlineOutput["language"]; kind: "TS" | "TSX" | "JS" | "JSX" }
  | { language: TreeSitterLanguage; kind: "tree-sitter" };

/**
 * Every outline is parsed in one worker thread (outline-worker.ts), started on the first /o and kept: a large file
 * takes its parser up to a second, which on the event loop would hold every other call of every session.
 */
const parser = new DeadlineWorker<OutlineJob, { outline?: Outline; error?: string }>(() =>
  workerEntry(import.meta.url, "outline-worker"),
);

/** Extensions /o understands, with the parser each needs. */
const LANGUAGES: Record<string, Parsed> = {
  ".py": { language: "python", kind: "tree-sitter" },
  ".pyi": { language: "python", kind: "tree-sitter" },
  ".go": { language: "go", kind: "tree-sitter" },
  ".rs": { language: "rust", kind: "tree-sitter" },
  ".java": { language: "java", kind: "tree-sitter" },
  ".ts": { language: "typescript", kind: "TS" },
  ".mts": { language: "typescript", kind: "TS" },
  ".cts": { language: "typescript", kind: "TS" },
  ".tsx": { language: "tsx", kind: "TSX" },
  ".js": { language: "javascript", kind: "JS" },
  ".mjs": { language: "javascript", kind: "JS" },
  ".cjs": { language: "javascript", kind: "JS" },
  ".jsx": { language: "jsx", kind: "JSX" },
};

export const OUTLINE_EXTENSIONS = Object.keys(LANGUAGES);

/** What /o answers. */
export const outlineOutput = z.strictObject({
  ok: z.literal(true),
  path: z.string().describe("The file in /project/... form."),
  language: z
    .enum(["typescript", "tsx", "javascript", "jsx", "python", "go", "rust", "java"])
    .describe("Language the file was parsed as, from its extension."),
  totalLines: z.number().int().min(0).describe("Lines in the file, counted by \\n as /r counts them."),
  imports: z
    .array(outlineImport)
    .describe(
      "Imports (import/from, use, Go import specs; require() calls at the top level and re-exports in JS), in file order.",
    ),
  declarations: z.array(outlineDeclaration).describe("Named declarations in file order, with their line spans."),
  truncated: z
    .boolean()
    .describe(`true: the outline stopped after ${MAX_OUTLINE_ENTRIES} entries; notice says how to see the rest.`),
  notice: z.string().optional().describe("Present when truncated."),
});

export type OutlineOutput = z.infer<typeof outlineOutput>;

export const outlineTool = defineTool({
  id: "outline",
  route: "o",
  longRoutes: ["symbols"],
  capability: "read",
  description:
    "Imports and declarations (functions, classes and members, interfaces, types, enums, exports) of a JS/TS, Python, Go, Rust or Java file, with line numbers.",
  example: "/o?path=src/app.ts",
  schema: z.object({ path: z.string() }),
  output: outlineOutput,
  url: { aliases: { file: "path" } },
  async execute(args, ctx) {
    const target = walkInsideRoot(ctx.project.root, args.path, { allowMissing: false });
    let bytes: Buffer;
    let language: (typeof LANGUAGES)[string];
    try {
      const info = target.stats!;
      if (!info.isFile()) {
        throw new ToolError(
          ErrorCode.notAFile,
          `${target.display} is a directory; /o outlines one file. List it with /r or find files with /f.`,
          {
            detail: { path: target.display },
          },
        );
      }
      const known = LANGUAGES[path.extname(target.absolute).toLowerCase()];
      if (!known) {
        throw new ToolError(
          ErrorCode.unsupportedLanguage,
          `/o outlines JavaScript, TypeScript, Python, Go, Rust and Java (${OUTLINE_EXTENSIONS.join(" ")}). For ${target.display}, search it with /g?path=${target.display}&raw=<text> or read it with the read URL.`,
          {
            detail: { path: target.display, supported: OUTLINE_EXTENSIONS },
            retryable: false,
            extra: { read: ctx.urls.to("r", "r", [["path", target.display]]) },
          },
        );
      }
      language = known;
      if (info.size > MAX_OUTLINE_FILE_BYTES) {
        throw new ToolError(
          ErrorCode.fileTooLarge,
          `${target.display} is ${info.size} bytes; /o parses files up to ${MAX_OUTLINE_FILE_BYTES} bytes. Search it with /g instead.`,
          {
            detail: { path: target.display, size: info.size, limit: MAX_OUTLINE_FILE_BYTES },
            retryable: false,
          },
        );
      }
      bytes = await readHeldFile(target.fd!, info.size);
    } finally {
      target.close();
    }
    const file = decodeLossy(bytes);
    if (file.kind === "binary") {
      throw new ToolError(
        ErrorCode.binaryFile,
        `${target.display} is binary (it contains NUL bytes), so it has no outline. /t shows its size; outline a source file instead.`,
        {
          detail: { path: target.display },
          retryable: false,
        },
      );
    }
    const text = file.utf8.toString("utf8");
    const job: OutlineJob = {
      fileName: target.absolute,
      text,
      parser:
        language.kind === "tree-sitter"
          ? { kind: "tree-sitter", language: language.language }
          : { kind: language.kind },
      maxEntries: MAX_OUTLINE_ENTRIES,
    };
    const outcome = await parser.run(job, Date.now() + MAX_OUTLINE_MS, ctx.signal);
    if ("failed" in outcome && outcome.failed === "aborted") throw ctx.signal.reason ?? new Error("outline aborted");
    const outline = "reply" in outcome ? outcome.reply.outline : undefined;
    if (!outline) {
      // Whether the parse ran out of time or failed is the outcome's, not whether a message came with it.
      const timedOut = "failed" in outcome && outcome.failed === "timeout";
      const why =
        ("reply" in outcome ? outcome.reply.error : "failed" in outcome ? outcome.message : undefined) ??
        "the parser stopped";
      throw new ToolError(
        ErrorCode.outlineFailed,
        `${timedOut ? `Parsing ${target.display} took longer than ${MAX_OUTLINE_MS / 1000} s, so it was stopped` : `${target.display} could not be parsed (${why.slice(0, 200)})`}. Read its lines with /r offset= and limit=, or find what you need with /g.`,
        {
          detail: { path: target.display, reason: timedOut ? "timeout" : "error" },
          retryable: false,
          extra: { read: ctx.urls.to("r", "r", [["path", target.display]]) },
        },
      );
    }
    return {
      ok: true,
      path: target.display,
      language: language.language,
      totalLines: indexLines(file.utf8).starts.length,
      imports: outline.imports,
      declarations: outline.declarations,
      truncated: outline.truncated,
      ...(outline.truncated
        ? {
            notice: `The outline stops after ${MAX_OUTLINE_ENTRIES} entries; read the rest of the file with /r offset= and limit=.`,
          }
        : {}),
    };
  },
});
