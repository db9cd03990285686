// Every regular expression literal in the server and the bundled plugins, checked with recheck (a ReDoS analyser,
// dev dependency) for super-linear backtracking. The server runs them on its event loop, so one that backtracks
// on an input an agent, a repository or a web page controls stalls every session (hostile-input-time.test.ts has
// the cases found that way). A new vulnerable expression fails here: make it linear, or, when its input is
// trusted or short by construction, add it below with the reason. The automaton checker is deterministic; it
// answers "unknown" for lookarounds and backreferences, which hostile-input-time.test.ts covers by running them,
// and for an expression whose automaton it cannot build within CHECK_MS (two large alternations here, safe when
// given longer): every vulnerable one found so far is found in well under a second.
import fs from "node:fs";
import path from "node:path";
import { checkSync } from "recheck";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const CHECK_MS = 3000;

/** Vulnerable by the checker, safe by their input: file and source, and why. */
const ALLOWED: Record<string, string> = {
  "server/config-env.ts /\\/+$/": "the operator's environment (a public origin)",
  "server/control/mcp-snippets.ts /^[-_]+|[-_]+$/g": "a session name, set by the operator on the control plane",
  "server/control/mcp-snippets.ts /[-_]+$/": "a session name, set by the operator on the control plane",
  "server/config-checks.ts /=+$/": "the operator token file or variable (43 characters of base64url)",
  "server/kernel/search/ripgrep-confine.ts /(?:=>\\s*)?(\\/\\S+)\\s+\\(0x/g":
    "ldd's listing of the rg binary's libraries",
  "server/kernel/web/convert/charset.ts /<meta\\b[^>]*>/gi": "the first 1024 bytes of a page (META_PRESCAN_BYTES)",
  "server/kernel/web/convert/charset.ts /\\bcharset\\s*=\\s*[\"']?\\s*([\\w.:-]+)/i":
    "one <meta> tag of those 1024 bytes",
  "server/kernel/web/guard/address-rules.ts /(\\d+\\.\\d+\\.\\d+\\.\\d+)$/":
    "an IPv6 literal the URL parser already accepted (at most 45 characters)",
  "server/sandbox/env-scrub.ts /[a-z][a-z0-9+.-]*:\\/\\/[^\\s/@:]+:[^\\s/@]+@/i":
    "the bridge's own environment, which the operator sets",
  "server/sandbox/spawner.ts /^x (\\d+) (-?\\d+) (\\d+) ?(.*)$/":
    "event lines of our own spawner (native/urlbridge-spawner.c)",
};

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== "node_modules") out.push(...sourceFiles(full));
    else if (entry.isFile() && /\.(?:ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(full);
  }
  return out;
}

interface Literal {
  key: string;
  where: string;
  source: string;
  flags: string;
}

function regexLiterals(): Literal[] {
  const found: Literal[] = [];
  for (const file of [...sourceFiles(path.join(ROOT, "server")), ...sourceFiles(path.join(ROOT, "plugins"))]) {
    const rel = path.relative(ROOT, file);
    const tree = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
        const text = (node as ts.RegularExpressionLiteral).text;
        const slash = text.lastIndexOf("/");
        const line = tree.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        found.push({
          key: `${rel} ${text}`,
          where: `${rel}:${line}`,
          source: text.slice(1, slash),
          flags: text.slice(slash + 1),
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(tree);
  }
  return found;
}

describe("regular expressions in the server", () => {
  it(
    "backtrack at most linearly, but for those whose input is trusted or short (listed with the reason)",
    { timeout: 120_000 },
    () => {
      const literals = regexLiterals();
      expect(literals.length).toBeGreaterThan(100);
      const status = new Map<string, string>();
      for (const literal of literals)
        status.set(
          literal.key,
          checkSync(literal.source, literal.flags, { checker: "automaton", timeout: CHECK_MS }).status,
        );
      const unexpected = literals
        .filter((l) => status.get(l.key) === "vulnerable" && !(l.key in ALLOWED))
        .map((l) => `${l.where} ${l.key}`);
      expect(unexpected, "make these linear, or list them in ALLOWED with why their input cannot be hostile").toEqual(
        [],
      );
      // A listed one that is gone or proved safe leaves the list ("unknown", a check cut short, is not proof).
      expect(Object.keys(ALLOWED).filter((key) => !status.has(key) || status.get(key) === "safe")).toEqual([]);
    },
  );
});
