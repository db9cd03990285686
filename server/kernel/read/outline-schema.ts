// The entries /o answers, as zod schemas (part of the outline tool's output schema in outline.ts), and the outline
// both parsers build (outline-ts.ts, outline-tree-sitter.ts). The parsers run in the outline worker
// (outline-worker.ts) and import only this file's types, so the worker loads no zod.
import { z } from "zod";

const line = z
  .number()
  .int()
  .min(1)
  .describe("1-based line where it starts, the same numbering /r uses (read from it with /r offset=).");

export const outlineImport = z.strictObject({
  line,
  from: z.string().describe("Module specifier, as written."),
  names: z
    .array(z.string())
    .optional()
    .describe('Bound names: "x", "* as ns", "a as b"; absent for a side-effect import.'),
  typeOnly: z.literal(true).optional().describe("Present for import type / export type."),
  reexport: z.literal(true).optional().describe("Present for export ... from: re-exported rather than imported."),
});

export const outlineMember = z.strictObject({
  kind: z.enum(["constructor", "method", "property", "getter", "setter", "index", "call", "new"]),
  name: z
    .string()
    .describe('Member name; members without one are shown by what they are: "constructor", "[index]", "()", "new()".'),
  line,
  static: z.literal(true).optional(),
});

export const outlineDeclaration = z.strictObject({
  kind: z
    .enum([
      "function",
      "class",
      "interface",
      "type",
      "enum",
      "namespace",
      "const",
      "let",
      "var",
      "export",
      "export=",
      "export-default",
      "method",
      "struct",
      "trait",
      "impl",
      "module",
      "record",
      "macro",
      "static",
    ])
    .describe(
      'export: a local export list or a CommonJS export; export= and export-default: export assignments. method (Go methods, as Type.Name), struct, trait, impl ("Trait for Type"), module, record, macro and static come from the other languages.',
    ),
  name: z
    .string()
    .describe('Declared name ("default" for an anonymous default export; comma-joined names for an export list).'),
  line,
  endLine: z
    .number()
    .int()
    .min(1)
    .describe("1-based line where it ends; read the whole declaration with /r offset=line&limit=endLine-line+1."),
  exported: z
    .literal(true)
    .optional()
    .describe("Exported: export in JS/TS, pub in Rust, public in Java, a capitalised name in Go."),
  default: z.literal(true).optional(),
  async: z.literal(true).optional(),
  members: z.array(outlineMember).optional().describe("Members of a class, interface, struct, trait or impl."),
  get declarations(): z.ZodOptional<z.ZodArray<typeof outlineDeclaration>> {
    return z
      .array(outlineDeclaration)
      .optional()
      .describe("Declarations inside a namespace, a Rust module or a Java type.");
  },
});

export type OutlineImport = z.infer<typeof outlineImport>;
export type OutlineMember = z.infer<typeof outlineMember>;
export type OutlineDeclaration = z.infer<typeof outlineDeclaration>;

export interface Outline {
  imports: OutlineImport[];
  declarations: OutlineDeclaration[];
  /** Entries (imports, declarations and members) produced. */
  entries: number;
  truncated: boolean;
}
