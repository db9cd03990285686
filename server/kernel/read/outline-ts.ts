// Builds a JS/TS outline from the TypeScript compiler's syntax tree: imports (ES, require, re-exports) and
// named declarations with their line spans. Parsing only; no type checking, no module resolution.
import type * as TS from "typescript";
import type { Outline, OutlineDeclaration, OutlineImport, OutlineMember } from "./outline-schema.js";

type DeclarationKind = OutlineDeclaration["kind"];
type MemberKind = OutlineMember["kind"];

type Ts = typeof TS;

/** Members without a name of their own, shown by what they are. */
const UNNAMED_MEMBERS: Partial<Record<MemberKind, string>> = {
  constructor: "constructor",
  index: "[index]",
  call: "()",
  new: "new()",
};

/**
 * Line numbering by \n only, like /r and /g. The compiler's own line map also breaks at \r, U+2028 and
 * U+2029, which would make its numbers disagree with a read of the same file.
 */
export function createLineLookup(text: string): (position: number) => number {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return (position) => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (starts[mid]! <= position) low = mid;
      else high = mid - 1;
    }
    return low + 1;
  };
}

export function buildOutline(ts: Ts, source: TS.SourceFile, maxEntries: number): Outline {
  const outline: Outline = { imports: [], declarations: [], entries: 0, truncated: false };
  const lineOf = createLineLookup(source.text);
  const startLine = (node: TS.Node) => lineOf(node.getStart(source));
  const room = () => {
    if (outline.entries >= maxEntries) outline.truncated = true;
    return !outline.truncated;
  };
  const hasModifier = (node: TS.Node, kind: TS.SyntaxKind) =>
    ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []).some((m) => m.kind === kind) : false;
  const nameOf = (name: TS.Node | undefined): string => {
    if (!name) return "default";
    if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name))
      return name.text;
    return name.getText(source);
  };
  const bindingNames = (name: TS.BindingName): string[] =>
    ts.isIdentifier(name)
      ? [name.text]
      : name.elements.flatMap((e) => (ts.isOmittedExpression(e) ? [] : bindingNames(e.name)));

  const addImport = (entry: OutlineImport) => {
    if (!room()) return;
    outline.entries++;
    outline.imports.push(entry);
  };

  const membersOf = (node: TS.ClassLikeDeclaration | TS.InterfaceDeclaration): OutlineMember[] => {
    const members: OutlineMember[] = [];
    for (const member of node.members) {
      if (!room()) break;
      const kind = memberKind(ts, member);
      if (!kind) continue;
      outline.entries++;
      const name = UNNAMED_MEMBERS[kind] ?? nameOf(member.name);
      members.push({
        kind,
        name,
        line: startLine(member),
        ...(hasModifier(member, ts.SyntaxKind.StaticKeyword) ? { static: true as const } : {}),
      });
    }
    return members;
  };

  const declare = (
    into: OutlineDeclaration[],
    node: TS.Node,
    kind: DeclarationKind,
    name: string,
    extra: Partial<OutlineDeclaration> = {},
  ) => {
    if (!room()) return undefined;
    outline.entries++;
    const exported = hasModifier(node, ts.SyntaxKind.ExportKeyword);
    const isDefault = hasModifier(node, ts.SyntaxKind.DefaultKeyword);
    const entry: OutlineDeclaration = {
      kind,
      name,
      line: startLine(node),
      endLine: lineOf(node.end),
      ...(exported ? { exported: true as const } : {}),
      ...(isDefault ? { default: true as const } : {}),
      ...(hasModifier(node, ts.SyntaxKind.AsyncKeyword) ? { async: true as const } : {}),
      ...extra,
    };
    into.push(entry);
    return entry;
  };

  const visitStatements = (statements: readonly TS.Statement[], into: OutlineDeclaration[], topLevel: boolean) => {
    for (const statement of statements) {
      if (!room()) return;
      visitStatement(statement, into, topLevel);
    }
  };

  const visitStatement = (node: TS.Statement, into: OutlineDeclaration[], topLevel: boolean) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const names: string[] = [];
      if (clause?.name) names.push(clause.name.text);
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) names.push(`* as ${bindings.name.text}`);
      if (bindings && ts.isNamedImports(bindings)) {
        for (const el of bindings.elements)
          names.push(el.propertyName ? `${nameOf(el.propertyName)} as ${el.name.text}` : el.name.text);
      }
      addImport({
        line: startLine(node),
        from: node.moduleSpecifier.text,
        ...(clause ? { names } : {}),
        ...(clause?.isTypeOnly ? { typeOnly: true as const } : {}),
      });
    } else if (ts.isImportEqualsDeclaration(node)) {
      const ref = node.moduleReference;
      if (ts.isExternalModuleReference(ref) && ts.isStringLiteral(ref.expression))
        addImport({ line: startLine(node), from: ref.expression.text, names: [node.name.text] });
    } else if (ts.isExportDeclaration(node)) {
      const names = node.exportClause
        ? ts.isNamedExports(node.exportClause)
          ? node.exportClause.elements.map((el) =>
              el.propertyName ? `${nameOf(el.propertyName)} as ${nameOf(el.name)}` : nameOf(el.name),
            )
          : [`* as ${nameOf(node.exportClause.name)}`]
        : ["*"];
      if (node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        addImport({
          line: startLine(node),
          from: node.moduleSpecifier.text,
          names,
          reexport: true,
          ...(node.isTypeOnly ? { typeOnly: true as const } : {}),
        });
      } else {
        declare(into, node, "export", names.join(", "), { exported: true });
      }
    } else if (ts.isFunctionDeclaration(node)) {
      declare(into, node, "function", nameOf(node.name));
    } else if (ts.isClassDeclaration(node)) {
      const entry = declare(into, node, "class", nameOf(node.name));
      if (entry) entry.members = membersOf(node);
    } else if (ts.isInterfaceDeclaration(node)) {
      const entry = declare(into, node, "interface", node.name.text);
      if (entry) entry.members = membersOf(node);
    } else if (ts.isTypeAliasDeclaration(node)) {
      declare(into, node, "type", node.name.text);
    } else if (ts.isEnumDeclaration(node)) {
      declare(into, node, "enum", node.name.text);
    } else if (ts.isModuleDeclaration(node)) {
      const entry = declare(into, node, "namespace", nameOf(node.name));
      if (entry && node.body && ts.isModuleBlock(node.body)) {
        entry.declarations = [];
        visitStatements(node.body.statements, entry.declarations, false);
      }
    } else if (ts.isVariableStatement(node)) {
      visitVariables(node, into, topLevel);
    } else if (ts.isExportAssignment(node)) {
      const expression = node.expression;
      declare(
        into,
        node,
        node.isExportEquals ? "export=" : "export-default",
        ts.isIdentifier(expression) ? expression.text : "default",
        { exported: true },
      );
    } else if (topLevel && ts.isExpressionStatement(node)) {
      visitCommonJsExport(node, into);
    }
  };

  const visitVariables = (node: TS.VariableStatement, into: OutlineDeclaration[], topLevel: boolean) => {
    const exported = hasModifier(node, ts.SyntaxKind.ExportKeyword);
    const keyword =
      node.declarationList.flags & ts.NodeFlags.Const
        ? "const"
        : node.declarationList.flags & ts.NodeFlags.Let
          ? "let"
          : "var";
    for (const decl of node.declarationList.declarations) {
      const init = decl.initializer;
      const required = init && topLevel ? requiredModule(ts, init) : undefined;
      if (required !== undefined) {
        addImport({ line: startLine(decl), from: required, names: bindingNames(decl.name) });
        continue;
      }
      const callable = init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init));
      const classy = init && ts.isClassExpression(init);
      if (!exported && !callable && !classy) continue;
      for (const name of bindingNames(decl.name)) {
        if (!room()) return;
        outline.entries++;
        const entry: OutlineDeclaration = {
          kind: callable ? "function" : classy ? "class" : keyword,
          name,
          line: startLine(decl),
          endLine: lineOf(decl.end),
          ...(exported ? { exported: true as const } : {}),
          ...(callable && hasModifier(init, ts.SyntaxKind.AsyncKeyword) ? { async: true as const } : {}),
        };
        if (classy) entry.members = membersOf(init);
        into.push(entry);
      }
    }
  };

  const visitCommonJsExport = (node: TS.ExpressionStatement, into: OutlineDeclaration[]) => {
    const expression = node.expression;
    if (!ts.isBinaryExpression(expression) || expression.operatorToken.kind !== ts.SyntaxKind.EqualsToken) return;
    const target = expression.left.getText(source);
    const match = /^(?:module\.exports|exports)(?:\.([A-Za-z_$][\w$]*))?$/.exec(target);
    if (!match) return;
    declare(into, node, "export", match[1] ?? "module.exports", { exported: true });
  };

  visitStatements(source.statements, outline.declarations, true);
  return outline;
}

function memberKind(ts: Ts, member: TS.Node): MemberKind | undefined {
  if (ts.isConstructorDeclaration(member)) return "constructor";
  if (ts.isMethodDeclaration(member) || ts.isMethodSignature(member)) return "method";
  if (ts.isPropertyDeclaration(member) || ts.isPropertySignature(member)) return "property";
  if (ts.isGetAccessorDeclaration(member)) return "getter";
  if (ts.isSetAccessorDeclaration(member)) return "setter";
  if (ts.isIndexSignatureDeclaration(member)) return "index";
  if (ts.isCallSignatureDeclaration(member)) return "call";
  if (ts.isConstructSignatureDeclaration(member)) return "new";
  return undefined;
}

/** "x" for require("x") (also require("x").y), else undefined. */
function requiredModule(ts: Ts, init: TS.Expression): string | undefined {
  let expression: TS.Expression = init;
  while (ts.isPropertyAccessExpression(expression)) expression = expression.expression;
  if (
    !ts.isCallExpression(expression) ||
    !ts.isIdentifier(expression.expression) ||
    expression.expression.text !== "require"
  )
    return undefined;
  const [arg] = expression.arguments;
  return arg && ts.isStringLiteral(arg) ? arg.text : undefined;
}
