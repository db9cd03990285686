// One outline job, as the outline worker (outline-worker.ts) runs it: the file's text parsed by the TypeScript
// compiler (JS/TS) or tree-sitter (Python, Go, Rust, Java), both loaded on the first job that needs them.
import type * as TS from "typescript";
import type { Outline } from "./outline-schema.js";
import { buildOutline } from "./outline-ts.js";
import { treeSitterOutline, type TreeSitterLanguage } from "./outline-tree-sitter.js";

export type OutlineParser =
  { kind: "TS" | "TSX" | "JS" | "JSX" } | { kind: "tree-sitter"; language: TreeSitterLanguage };

export interface OutlineJob {
  /** The file's absolute path: the compiler's file name (it decides nothing but messages). */
  fileName: string;
  text: string;
  parser: OutlineParser;
  maxEntries: number;
}

let compiler: Promise<typeof TS> | undefined;
/** The compiler is large (~9 MB of JavaScript); loaded on the first JS/TS outline. */
function loadCompiler(): Promise<typeof TS> {
  compiler ??= import("typescript").then((m) => (m as unknown as { default: typeof TS }).default ?? (m as typeof TS));
  return compiler;
}

export async function parseOutline({ fileName, text, parser, maxEntries }: OutlineJob): Promise<Outline> {
  if (parser.kind === "tree-sitter") return treeSitterOutline(parser.language, text, maxEntries);
  const ts = await loadCompiler();
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind[parser.kind]);
  return buildOutline(ts, source, maxEntries);
}
