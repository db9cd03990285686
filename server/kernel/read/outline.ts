// outline (/o): imports and named declarations of a source file with line numbers, so an agent can read only
// the ranges it needs: JS/TS from the TypeScript compiler's parser, Python, Go, Rust and Java from tree-sitter.
import path from "node:path";
import type * as TS from "typescript";
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { readHeldFile } from "../../sandbox/fd-ops.js";
import { walkInsideRoot } from "../../sandbox/fd-walk.js";
import { MAX_OUTLINE_ENTRIES, MAX_OUTLINE_FILE_BYTES } from "../limits.js";
import { buildOutline, outlineDeclaration, outlineImport, type Outline } from "./outline-ts.js";
import { treeSitterOutline, type TreeSitterLanguage } from "./outline-tree-sitter.js";
import { decodeLossy, indexLines } from "../../text/index.js";
import { defineTool } from "../tool/definition.js";

type Parsed = { language: OutlineOutput["language"]; kind: "TS" | "TSX" | "JS" | "JSX" } | { language: TreeSitterLanguage; kind: "tree-sitter" };

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
  language: z.enum(["typescript", "tsx", "javascript", "jsx", "python", "go", "rust", "java"]).describe("Language the file was parsed as, from its extension."),
  totalLines: z.number().int().min(0).describe("Lines in the file, counted by \\n as /r counts them."),
  imports: z.array(outlineImport).describe("Imports (import/from, use, Go import specs; require() calls at the top level and re-exports in JS), in file order."),
  declarations: z.array(outlineDeclaration).describe("Named declarations in file order, with their line spans."),
  truncated: z.boolean().describe(`true: the outline stopped after ${MAX_OUTLINE_ENTRIES} entries; notice says how to see the rest.`),
  notice: z.string().optional().describe("Present when truncated."),
});

export type OutlineOutput = z.infer<typeof outlineOutput>;

let compiler: Promise<typeof TS> | undefined;
/** The compiler is large; load it on the first outline, not at start-up. */
function loadCompiler(): Promise<typeof TS> {
  compiler ??= import("typescript").then((m) => (m as unknown as { default: typeof TS }).default ?? (m as typeof TS));
  return compiler;
}

export const outlineTool = defineTool({
  id: "outline",
  route: "o",
  longRoutes: ["symbols"],
  capability: "read",
  description: "Imports and declarations (functions, classes and members, interfaces, types, enums, exports) of a JS/TS, Python, Go, Rust or Java file, with line numbers.",
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
        throw new ToolError(ErrorCode.notAFile, `${target.display} is a directory; /o outlines one file. List it with /r or find files with /f.`, {
          detail: { path: target.display },
        });
      }
      const known = LANGUAGES[path.extname(target.absolute).toLowerCase()];
      if (!known) {
        throw new ToolError(
          ErrorCode.unsupportedLanguage,
          `/o outlines JavaScript, TypeScript, Python, Go, Rust and Java (${OUTLINE_EXTENSIONS.join(" ")}). For ${target.display}, search it with /g?path=${target.display}&raw=<text> or read it with the read URL.`,
          { detail: { path: target.display, supported: OUTLINE_EXTENSIONS }, retryable: false, extra: { read: ctx.urls.to("r", "r", [["path", target.display]]) } },
        );
      }
      language = known;
      if (info.size > MAX_OUTLINE_FILE_BYTES) {
        throw new ToolError(ErrorCode.fileTooLarge, `${target.display} is ${info.size} bytes; /o parses files up to ${MAX_OUTLINE_FILE_BYTES} bytes. Search it with /g instead.`, {
          detail: { path: target.display, size: info.size, limit: MAX_OUTLINE_FILE_BYTES },
          retryable: false,
        });
      }
      bytes = await readHeldFile(target.fd!, info.size);
    } finally {
      target.close();
    }
    const file = decodeLossy(bytes);
    if (file.kind === "binary") {
      throw new ToolError(ErrorCode.binaryFile, `${target.display} is binary (it contains NUL bytes), so it has no outline. /t shows its size; outline a source file instead.`, {
        detail: { path: target.display },
        retryable: false,
      });
    }
    const text = file.utf8.toString("utf8");
    let outline: Outline;
    if (language.kind === "tree-sitter") {
      outline = await treeSitterOutline(language.language, text, MAX_OUTLINE_ENTRIES);
    } else {
      const ts = await loadCompiler();
      const source = ts.createSourceFile(target.absolute, text, ts.ScriptTarget.Latest, true, ts.ScriptKind[language.kind]);
      outline = buildOutline(ts, source, MAX_OUTLINE_ENTRIES);
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
        ? { notice: `The outline stops after ${MAX_OUTLINE_ENTRIES} entries; read the rest of the file with /r offset= and limit=.` }
        : {}),
    };
  },
});
