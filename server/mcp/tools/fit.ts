// Answers cut to the MCP answer budget: a default grep (100 lines of up to 240 characters), glob (200 paths) or
// outline (600 entries) can run past the ~12 KB Codex 0.169 keeps of a result, which it would cut in the middle, unseen. The
// answer keeps whole matches in order while its JSON fits MCP_ANSWER_BUDGET_BYTES and says it stopped there
// (truncated, and a notice naming how to narrow), so the cut is one the model sees.
import type { OutlineOutput } from "../../kernel/read/outline.js";
import type { FindOutput } from "../../kernel/search/find.js";
import type { GrepOutput } from "../../kernel/search/grep.js";
import { MCP_ANSWER_BUDGET_BYTES } from "./spec.js";

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
/** Room kept for the notice and the changed counts. */
const SLACK = 400;

/** grep's answer with whole matching lines, in order, while it fits; undefined when it fits whole already. */
export function fitGrep(found: GrepOutput, narrow: string): GrepOutput | undefined {
  if (bytesOf(found) <= MCP_ANSWER_BUDGET_BYTES) return undefined;
  const { files: all, ...rest } = found;
  let used = bytesOf({ ...rest, files: [] }) + SLACK;
  const files: GrepOutput["files"] = [];
  let kept = 0;
  for (const file of all) {
    const head = bytesOf({ path: file.path, lines: [] }) + 1;
    if (used + head > MCP_ANSWER_BUDGET_BYTES) break;
    const lines: typeof file.lines = [];
    for (const line of file.lines) {
      const cost = bytesOf(line) + 1;
      if (used + head + cost > MCP_ANSWER_BUDGET_BYTES) break;
      lines.push(line);
      used += cost;
    }
    if (lines.length === 0) break;
    files.push({ path: file.path, lines });
    used += head;
    kept += lines.length;
    if (lines.length < file.lines.length) break;
  }
  const notice = `Showing ${kept} of ${found.matchedLines} matching lines: the answer stopped at its size budget. ${narrow}`;
  return {
    ...found,
    files,
    matchedLines: kept,
    truncated: true,
    notice: found.notice ? `${notice} ${found.notice}` : notice,
  };
}

/** glob's answer with whole results, in order, while it fits; undefined when it fits whole already. */
export function fitFind(found: FindOutput, narrow: string): FindOutput | undefined {
  if (bytesOf(found) <= MCP_ANSWER_BUDGET_BYTES) return undefined;
  const { results: all, ...rest } = found;
  let used = bytesOf({ ...rest, results: [] }) + SLACK;
  const results: FindOutput["results"] = [];
  for (const hit of all) {
    const cost = bytesOf(hit) + 1;
    if (used + cost > MCP_ANSWER_BUDGET_BYTES) break;
    results.push(hit);
    used += cost;
  }
  const notice = `Showing ${results.length} of ${found.count} files: the answer stopped at its size budget. ${narrow}`;
  return {
    ...found,
    results,
    count: results.length,
    truncated: true,
    notice: found.notice ? `${notice} ${found.notice}` : notice,
  };
}

/**
 * outline's answer with its imports and top-level declarations, in order, while they fit; undefined when it fits
 * whole. An outline cannot be paged, so `next` reads the file from the first declaration left out.
 */
export function fitOutline(
  found: OutlineOutput,
  path: string,
): (OutlineOutput & { next?: { tool: "read"; arguments: { path: string; offset: number } } }) | undefined {
  if (bytesOf(found) <= MCP_ANSWER_BUDGET_BYTES) return undefined;
  const { imports: allImports, declarations: allDeclarations, ...rest } = found;
  let used = bytesOf({ ...rest, imports: [], declarations: [] }) + SLACK;
  const take = <T>(all: T[]): T[] => {
    const kept: T[] = [];
    for (const item of all) {
      const cost = bytesOf(item) + 1;
      if (used + cost > MCP_ANSWER_BUDGET_BYTES) break;
      kept.push(item);
      used += cost;
    }
    return kept;
  };
  const imports = take(allImports);
  const declarations = imports.length === allImports.length ? take(allDeclarations) : [];
  const omitted = allDeclarations[declarations.length];
  const resume = imports.length < allImports.length ? allImports[imports.length]!.line : omitted?.line;
  const notice = `Showing ${imports.length} of ${allImports.length} imports and ${declarations.length} of ${allDeclarations.length} declarations: the answer stopped at its size budget.${resume !== undefined ? ` The rest starts at line ${resume}: next reads from there.` : ""}`;
  return {
    ...found,
    imports,
    declarations,
    truncated: true,
    notice: found.notice ? `${notice} ${found.notice}` : notice,
    ...(resume !== undefined ? { next: { tool: "read", arguments: { path, offset: resume } } } : {}),
  };
}
