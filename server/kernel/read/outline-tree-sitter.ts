// Outlines of Python, Go, Rust and Java files from tree-sitter syntax trees (the prebuilt grammars VS Code
// ships, @vscode/tree-sitter-wasm): imports and named declarations with line spans, as outline-ts.ts does for
// JS/TS. Parsing only, loaded on the first outline of each language; nothing of this runs at start-up.
import { createRequire } from "node:module";
import path from "node:path";
import type { Language, Node, Parser } from "@vscode/tree-sitter-wasm";
import type { Outline, OutlineDeclaration, OutlineImport, OutlineMember } from "./outline-schema.js";

export type TreeSitterLanguage = "python" | "go" | "rust" | "java";

interface Runtime {
  Parser: typeof Parser;
  Language: typeof Language;
  dir: string;
}

let runtime: Promise<Runtime> | undefined;
const languages = new Map<TreeSitterLanguage, Promise<Language>>();

function loadRuntime(): Promise<Runtime> {
  runtime ??= (async () => {
    const require = createRequire(import.meta.url);
    const entry = require.resolve("@vscode/tree-sitter-wasm");
    const module = require("@vscode/tree-sitter-wasm") as { Parser: typeof Parser; Language: typeof Language };
    await module.Parser.init();
    return { ...module, dir: path.dirname(entry) };
  })();
  return runtime;
}

async function parserFor(language: TreeSitterLanguage): Promise<Parser> {
  const rt = await loadRuntime();
  let loaded = languages.get(language);
  if (!loaded) {
    loaded = rt.Language.load(path.join(rt.dir, `tree-sitter-${language}.wasm`));
    languages.set(language, loaded);
  }
  const parser = new rt.Parser();
  parser.setLanguage(await loaded);
  return parser;
}

type Kind = OutlineDeclaration["kind"];

/** Collects entries up to the bound; everything past it only marks the outline truncated. */
class Collector {
  readonly outline: Outline = { imports: [], declarations: [], entries: 0, truncated: false };
  constructor(private readonly max: number) {}
  take(): boolean {
    if (this.outline.entries >= this.max) {
      this.outline.truncated = true;
      return false;
    }
    this.outline.entries += 1;
    return true;
  }
  addImport(entry: OutlineImport): void {
    if (this.take()) this.outline.imports.push(entry);
  }
  declaration(
    node: Node,
    kind: Kind,
    name: string,
    extra: Partial<OutlineDeclaration> = {},
  ): OutlineDeclaration | undefined {
    if (!this.take()) return undefined;
    const entry: OutlineDeclaration = { kind, name, line: lineOf(node), endLine: endLineOf(node), ...extra };
    return entry;
  }
  member(into: OutlineDeclaration, node: Node, kind: OutlineMember["kind"], name: string, isStatic = false): void {
    if (!this.take()) return;
    (into.members ??= []).push({ kind, name, line: lineOf(node), ...(isStatic ? { static: true as const } : {}) });
  }
}

// tree-sitter rows break at \n only, as /r and /g count lines.
const lineOf = (node: Node) => node.startPosition.row + 1;
const endLineOf = (node: Node) =>
  node.endPosition.row + 1 - (node.endPosition.column === 0 && node.endPosition.row > node.startPosition.row ? 1 : 0);
const named = (node: Node | null | undefined): Node[] => (node ? (node.namedChildren.filter(Boolean) as Node[]) : []);
const field = (node: Node, name: string) => node.childForFieldName(name);
const nameOf = (node: Node) => field(node, "name")?.text ?? "";
const hasChild = (node: Node, type: string) => node.children.some((c) => c?.type === type);
/** The named nodes of a field that may repeat (Go's `A, B = 1, 2`), without the punctuation between them. */
const namesOf = (node: Node, name: string) => node.childrenForFieldName(name).filter((n) => n?.isNamed) as Node[];

function pushDeclaration(list: OutlineDeclaration[], entry: OutlineDeclaration | undefined): void {
  if (entry) list.push(entry);
}

// ---- Python ----------------------------------------------------------------------------------------------

function pythonImport(c: Collector, node: Node): void {
  if (node.type === "import_statement") {
    for (const part of named(node))
      c.addImport({
        line: lineOf(node),
        from: part.type === "aliased_import" ? (field(part, "name")?.text ?? part.text) : part.text,
        ...(part.type === "aliased_import" ? { names: [part.text] } : {}),
      });
    return;
  }
  const moduleNode = field(node, "module_name");
  const module = moduleNode?.text ?? "";
  const names = named(node)
    // Node objects are fresh wrappers on every access: compare positions, not identity.
    .filter((n) => !moduleNode || n.startIndex !== moduleNode.startIndex)
    .map((n) => (n.type === "wildcard_import" ? "*" : n.text));
  c.addImport({ line: lineOf(node), from: module, ...(names.length > 0 ? { names } : {}) });
}

function pythonDefinition(c: Collector, node: Node, into: OutlineDeclaration[]): void {
  const inner = node.type === "decorated_definition" ? field(node, "definition") : node;
  if (!inner) return;
  if (inner.type === "function_definition") {
    pushDeclaration(
      into,
      c.declaration(node, "function", nameOf(inner), hasChild(inner, "async") ? { async: true } : {}),
    );
  } else if (inner.type === "class_definition") {
    const entry = c.declaration(node, "class", nameOf(inner));
    if (!entry) return;
    for (const child of named(field(inner, "body"))) {
      const def = child.type === "decorated_definition" ? field(child, "definition") : child;
      if (def?.type === "function_definition") {
        const name = nameOf(def);
        const decorators =
          child.type === "decorated_definition"
            ? named(child)
                .filter((d) => d.type === "decorator")
                .map((d) => d.text)
            : [];
        c.member(
          entry,
          child,
          name === "__init__" ? "constructor" : decorators.some((d) => /@property\b/.test(d)) ? "getter" : "method",
          name,
          decorators.some((d) => /@(static|class)method\b/.test(d)),
        );
      }
    }
    into.push(entry);
  }
}

function outlinePython(c: Collector, root: Node): void {
  for (const node of named(root)) {
    if (
      node.type === "import_statement" ||
      node.type === "import_from_statement" ||
      node.type === "future_import_statement"
    )
      pythonImport(c, node);
    else if (
      node.type === "function_definition" ||
      node.type === "class_definition" ||
      node.type === "decorated_definition"
    )
      pythonDefinition(c, node, c.outline.declarations);
    else if (node.type === "expression_statement") {
      const assignment = named(node)[0];
      const left = assignment?.type === "assignment" ? field(assignment, "left") : null;
      if (left?.type === "identifier")
        pushDeclaration(
          c.outline.declarations,
          c.declaration(node, /^[A-Z][A-Z0-9_]*$/.test(left.text) ? "const" : "var", left.text),
        );
    }
  }
}

// ---- Go --------------------------------------------------------------------------------------------------

const goExported = (name: string) => (/^[A-Z]/.test(name) ? { exported: true as const } : {});

function outlineGo(c: Collector, root: Node): void {
  const out = c.outline.declarations;
  for (const node of named(root)) {
    switch (node.type) {
      case "import_declaration":
        for (const spec of node.descendantsOfType("import_spec").filter(Boolean) as Node[]) {
          const alias = field(spec, "name")?.text;
          c.addImport({
            line: lineOf(spec),
            from: (field(spec, "path")?.text ?? spec.text).replace(/^["`]|["`]$/g, ""),
            ...(alias ? { names: [alias] } : {}),
          });
        }
        break;
      case "function_declaration":
        pushDeclaration(out, c.declaration(node, "function", nameOf(node), goExported(nameOf(node))));
        break;
      case "method_declaration": {
        const receiver = field(node, "receiver")?.descendantsOfType(["type_identifier"])[0]?.text;
        pushDeclaration(
          out,
          c.declaration(
            node,
            "method",
            receiver ? `${receiver}.${nameOf(node)}` : nameOf(node),
            goExported(nameOf(node)),
          ),
        );
        break;
      }
      case "type_declaration":
        for (const spec of named(node)) {
          const type = field(spec, "type");
          const kind: Kind =
            type?.type === "struct_type" ? "struct" : type?.type === "interface_type" ? "interface" : "type";
          const entry = c.declaration(spec, kind, nameOf(spec), goExported(nameOf(spec)));
          if (!entry) continue;
          if (type?.type === "struct_type") {
            for (const f of type.descendantsOfType("field_declaration").filter(Boolean) as Node[])
              for (const n of namesOf(f, "name")) c.member(entry, f, "property", n.text);
          } else if (type?.type === "interface_type") {
            for (const m of type.descendantsOfType("method_elem").filter(Boolean) as Node[])
              c.member(entry, m, "method", nameOf(m));
          }
          out.push(entry);
        }
        break;
      case "const_declaration":
      case "var_declaration":
        for (const spec of named(node)) {
          for (const n of namesOf(spec, "name")) {
            pushDeclaration(
              out,
              c.declaration(spec, node.type === "const_declaration" ? "const" : "var", n.text, goExported(n.text)),
            );
          }
        }
        break;
    }
  }
}

// ---- Rust ------------------------------------------------------------------------------------------------

const rustPub = (node: Node) => (hasChild(node, "visibility_modifier") ? { exported: true as const } : {});

function rustItems(c: Collector, parent: Node | null, into: OutlineDeclaration[]): void {
  for (const node of named(parent)) {
    switch (node.type) {
      case "use_declaration":
        c.addImport({ line: lineOf(node), from: field(node, "argument")?.text ?? node.text });
        break;
      case "function_item":
      case "function_signature_item": {
        const modifiers = node.children.find((ch) => ch?.type === "function_modifiers");
        pushDeclaration(
          into,
          c.declaration(node, "function", nameOf(node), {
            ...rustPub(node),
            ...(modifiers && /\basync\b/.test(modifiers.text) ? { async: true as const } : {}),
          }),
        );
        break;
      }
      case "struct_item":
      case "union_item":
      case "enum_item":
      case "trait_item":
      case "type_item":
      case "const_item":
      case "static_item":
      case "macro_definition": {
        const kind: Kind = (
          {
            struct_item: "struct",
            union_item: "struct",
            enum_item: "enum",
            trait_item: "trait",
            type_item: "type",
            const_item: "const",
            static_item: "static",
            macro_definition: "macro",
          } as const
        )[node.type];
        const entry = c.declaration(node, kind, nameOf(node), rustPub(node));
        if (!entry) break;
        if (node.type === "trait_item")
          for (const m of named(field(node, "body")))
            if (m.type.startsWith("function_")) c.member(entry, m, "method", nameOf(m));
        if (node.type === "struct_item")
          for (const f of named(field(node, "body")))
            if (f.type === "field_declaration") c.member(entry, f, "property", nameOf(f));
        into.push(entry);
        break;
      }
      case "impl_item": {
        const type = field(node, "type")?.text ?? "";
        const trait = field(node, "trait")?.text;
        const entry = c.declaration(node, "impl", trait ? `${trait} for ${type}` : type);
        if (!entry) break;
        for (const m of named(field(node, "body")))
          if (m.type === "function_item")
            c.member(entry, m, "method", nameOf(m), !/\bself\b/.test(field(m, "parameters")?.text ?? ""));
        into.push(entry);
        break;
      }
      case "mod_item": {
        const entry = c.declaration(node, "module", nameOf(node), rustPub(node));
        if (!entry) break;
        const body = field(node, "body");
        if (body) {
          const inner: OutlineDeclaration[] = [];
          rustItems(c, body, inner);
          if (inner.length > 0) entry.declarations = inner;
        }
        into.push(entry);
        break;
      }
    }
  }
}

// ---- Java ------------------------------------------------------------------------------------------------

const JAVA_TYPES: Record<string, Kind> = {
  class_declaration: "class",
  interface_declaration: "interface",
  enum_declaration: "enum",
  record_declaration: "record",
  annotation_type_declaration: "interface",
};
const javaModifiers = (node: Node) => node.children.find((ch) => ch?.type === "modifiers")?.text ?? "";

function javaType(c: Collector, node: Node, into: OutlineDeclaration[]): void {
  const entry = c.declaration(
    node,
    JAVA_TYPES[node.type]!,
    nameOf(node),
    /\bpublic\b/.test(javaModifiers(node)) ? { exported: true } : {},
  );
  if (!entry) return;
  const nested: OutlineDeclaration[] = [];
  for (const member of named(field(node, "body"))) {
    const isStatic = /\bstatic\b/.test(javaModifiers(member));
    if (member.type === "method_declaration") c.member(entry, member, "method", nameOf(member), isStatic);
    else if (member.type === "constructor_declaration" || member.type === "compact_constructor_declaration")
      c.member(entry, member, "constructor", "constructor");
    else if (member.type === "field_declaration" || member.type === "constant_declaration") {
      for (const d of namesOf(member, "declarator")) c.member(entry, member, "property", nameOf(d), isStatic);
    } else if (member.type === "enum_body_declarations") {
      for (const inner of named(member))
        if (inner.type === "method_declaration")
          c.member(entry, inner, "method", nameOf(inner), /\bstatic\b/.test(javaModifiers(inner)));
    } else if (JAVA_TYPES[member.type]) javaType(c, member, nested);
  }
  if (nested.length > 0) entry.declarations = nested;
  into.push(entry);
}

function outlineJava(c: Collector, root: Node): void {
  for (const node of named(root)) {
    if (node.type === "import_declaration") {
      const target = named(node).find((n) => n.type === "scoped_identifier" || n.type === "identifier")?.text ?? "";
      const wildcard = named(node).some((n) => n.type === "asterisk");
      c.addImport({
        line: lineOf(node),
        from: target,
        ...(wildcard ? { names: ["*"] } : {}),
        ...(hasChild(node, "static") ? { names: [wildcard ? "static *" : "static"] } : {}),
      });
    } else if (JAVA_TYPES[node.type]) javaType(c, node, c.outline.declarations);
  }
}

/** Parses `text` as `language` and returns its outline, bounded to maxEntries entries. */
export async function treeSitterOutline(
  language: TreeSitterLanguage,
  text: string,
  maxEntries: number,
): Promise<Outline> {
  const parser = await parserFor(language);
  const tree = parser.parse(text);
  parser.delete();
  if (!tree) throw new Error(`tree-sitter could not parse the ${language} text`);
  try {
    const c = new Collector(maxEntries);
    const root = tree.rootNode;
    if (language === "python") outlinePython(c, root);
    else if (language === "go") outlineGo(c, root);
    else if (language === "rust") rustItems(c, root, c.outline.declarations);
    else outlineJava(c, root);
    return c.outline;
  } finally {
    tree.delete();
  }
}
