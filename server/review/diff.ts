// The exact diff of one recorded change: a unified diff (jsdiff) over the decoded text of both sides, newlines
// kept as the file has them (a CRLF line ends in \r), with each side's encoding and BOM named; binary or
// undecodable files by size and fingerprint. Applying `diff` to the text before gives the text after exactly,
// and encoding it in the after side's encoding gives the bytes after.
import { formatPatch, structuredPatch } from "diff";
import type { FileVersion } from "../store/changes.js";
import { decodeExact, type NewlineStyle, type TextEncoding } from "../text/index.js";

const CONTEXT_LINES = 3;
/** jsdiff's time bound for one file; past it the change shows as every old line removed, then every new one added. */
const MAX_DIFF_MS = 500;
/** The path an absent side is named by, as git and diff(1) write it. */
export const ABSENT_NAME = "/dev/null";

/** One side of a change as the diff describes it. */
export interface SideFacts {
  size: number;
  /** The first 32 hex digits of the content's sha256, as /r shows a file's fingerprint. */
  fingerprint: string;
  mode?: number;
  /** Text sides only. */
  encoding?: TextEncoding;
  newline?: NewlineStyle;
}

export type ChangeDiff =
  | { kind: "text"; diff: string; added: number; removed: number; before?: SideFacts; after?: SideFacts }
  | { kind: "binary"; before?: SideFacts; after?: SideFacts }
  /** The contents were dropped past the review budget: only sizes and fingerprints remain. */
  | { kind: "dropped"; before?: SideFacts; after?: SideFacts };

export function factsOf(version: FileVersion | undefined): SideFacts | undefined {
  if (!version) return undefined;
  return {
    size: version.size,
    fingerprint: version.hash.slice(0, 32),
    ...(version.mode === null ? {} : { mode: version.mode }),
  };
}

interface Side {
  version: FileVersion | undefined;
  bytes: Buffer | undefined;
}

/**
 * The diff from `before` to `after` (either absent); `blob` gives a version's bytes (undefined once dropped).
 * `from` names the before side when it is another path (a move).
 */
export function diffVersions(
  display: string,
  before: FileVersion | undefined,
  after: FileVersion | undefined,
  blob: (hash: string) => Buffer | undefined,
  from = display,
): ChangeDiff {
  const a: Side = { version: before, bytes: before ? blob(before.hash) : Buffer.alloc(0) };
  const b: Side = { version: after, bytes: after ? blob(after.hash) : Buffer.alloc(0) };
  const facts = { ...sideField("before", a.version), ...sideField("after", b.version) };
  if (!a.bytes || !b.bytes) return { kind: "dropped", ...facts };
  const ta = a.version ? decodeExact(a.bytes) : undefined;
  const tb = b.version ? decodeExact(b.bytes) : undefined;
  if ((ta && !ta.ok) || (tb && !tb.ok)) return { kind: "binary", ...facts };
  const beforeText = ta?.ok ? ta.decoded.text : "";
  const afterText = tb?.ok ? tb.decoded.text : "";
  const withText = (f: SideFacts | undefined, t: typeof ta): SideFacts | undefined =>
    f && t?.ok ? { ...f, encoding: t.decoded.encoding, newline: t.decoded.style } : f;
  const textFacts = {
    ...(facts.before ? { before: withText(facts.before, ta) } : {}),
    ...(facts.after ? { after: withText(facts.after, tb) } : {}),
  };
  const { diff, added, removed } = unifiedText(
    before ? from : ABSENT_NAME,
    after ? display : ABSENT_NAME,
    beforeText,
    afterText,
  );
  return { kind: "text", diff, added, removed, ...textFacts };
}

function sideField(name: "before" | "after", version: FileVersion | undefined): Partial<Record<string, SideFacts>> {
  const facts = factsOf(version);
  return facts ? { [name]: facts } : {};
}

/** A unified diff (---/+++ headers, @@ hunks; empty when the texts are equal) and its line counts. */
export function unifiedText(
  fromName: string,
  toName: string,
  before: string,
  after: string,
): { diff: string; added: number; removed: number } {
  if (before === after) return { diff: "", added: 0, removed: 0 };
  const patch = structuredPatch(fromName, toName, before, after, undefined, undefined, {
    context: CONTEXT_LINES,
    timeout: MAX_DIFF_MS,
  });
  if (!patch) return replacedWhole(fromName, toName, before, after);
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) added++;
      else if (line.startsWith("-")) removed++;
    }
  }
  // formatPatch opens with a "====" rule and tab-suffixed names; a plain unified diff has neither.
  const text = formatPatch(patch)
    .split("\n")
    .filter((line, i) => !(i === 0 && line.startsWith("=")))
    .map((line) => (line.startsWith("--- ") || line.startsWith("+++ ") ? line.replace(/\t$/, "") : line))
    .join("\n");
  return { diff: text, added, removed };
}

/** Every old line removed, then every new one added: the true change, when jsdiff gives up on aligning it. */
function replacedWhole(
  fromName: string,
  toName: string,
  before: string,
  after: string,
): { diff: string; added: number; removed: number } {
  const linesOf = (text: string) => (text === "" ? [] : text.split(/(?<=\n)/));
  const a = linesOf(before);
  const b = linesOf(after);
  const body = [...a.flatMap((l) => lineOut("-", l)), ...b.flatMap((l) => lineOut("+", l))];
  const range = (n: number) => (n === 0 ? "0,0" : `1,${n}`);
  return {
    diff: [`--- ${fromName}`, `+++ ${toName}`, `@@ -${range(a.length)} +${range(b.length)} @@`, ...body, ""].join("\n"),
    added: b.length,
    removed: a.length,
  };
}

function lineOut(sign: "-" | "+", line: string): string[] {
  return line.endsWith("\n") ? [`${sign}${line.slice(0, -1)}`] : [`${sign}${line}`, "\\ No newline at end of file"];
}
