// The work of an /e between reading the file and committing it, with no session in it: decode, find old (exact,
// then the tolerant strategies), check a retry's guard, splice new in, encode, and diff. Pure, so it runs either
// on the spot (small files) or in the edit worker (edit-offload.ts), which gives the same answers.
import { ErrorCode, ToolError } from "../../errors.js";
import { convertNewlines, decodeForEdit, encodeText, type DecodedText } from "../../text/index.js";
import { unifiedDiff, type ChangedLines } from "./edit-diff.js";
import { guardRefusal, type EditGuard, type GuardRefusal } from "./edit-guard.js";
import { locateOld, reindent, type EditMatch, type MatchStrategy } from "./edit-match.js";
import { firstNewlineIn, normalizeNewlines, normalizeWithOffsets, originalOffset } from "./text-match.js";

/** Occurrences counted (and line numbers listed) before an ambiguity error stops looking. */
export const MAX_COUNTED_MATCHES = 1000;
/** Longest replaced text a tolerant match shows back (the diff shows the change in full context). */
const MAX_SHOWN_REPLACED_CHARS = 2048;

export interface EditJob {
  /** The file's bytes as read. */
  previous: Uint8Array;
  display: string;
  /** old and new, newline-normalised. */
  old: string;
  replacement: string;
  all: boolean;
  guard?: EditGuard;
}

/** What a planned edit answers, before the session's own fields (the bulk-patch nudge). */
export interface PlannedAnswer {
  ok: true;
  path: string;
  line: number;
  linesRemoved: number;
  linesAdded: number;
  encoding: DecodedText["encoding"];
  newline: DecodedText["style"];
  matchedBy: MatchStrategy;
  replaced?: string;
  occurrences?: number;
  diff?: string;
  diffTruncated?: true;
}

/** The whole SHA-256s (hex) of the file before and after, when the edit worker computed them beside the plan. */
export interface PlanHashes {
  before: string;
  after: string;
}

/**
 * planned: the bytes to write and the answer. refused: a guard refused the edit. unmatched: old matched nowhere
 * or ambiguously; the error needs the session (URLs, the nearest-lines search), so it gets the normalised text.
 * A failure that needs no session (not text, no change) is thrown as a ToolError.
 */
export type EditPlan =
  | { kind: "planned"; bytes: Buffer; answer: PlannedAnswer; hashes?: PlanHashes }
  | { kind: "refused"; refusal: GuardRefusal }
  | { kind: "unmatched"; text: string; match: EditMatch | undefined };

export function planEdit(job: EditJob): EditPlan {
  const { display, old, replacement, all, guard } = job;
  const previous = Buffer.from(job.previous.buffer, job.previous.byteOffset, job.previous.byteLength);
  const decoded = decodeForEdit(previous, display);
  const normalized = normalizeWithOffsets(decoded.text);
  const match = locateOld(normalized.text, old, { all, limit: MAX_COUNTED_MATCHES + 1 });
  // A guarded retry names exact lines an earlier answer showed: only an exact match there counts.
  if (guard) {
    const hits = match?.strategy === "exact" ? match.spans.map((s) => s.start) : [];
    const refusal = guardRefusal(normalized.text, old, hits, guard);
    if (refusal) return { kind: "refused", refusal };
  }
  if (!match || (match.spans.length !== 1 && !(all && match.strategy === "exact")))
    return { kind: "unmatched", text: normalized.text, match };

  // Each span maps back to the original text; new lines take the newline the replaced span used (mixed files
  // stay mixed), else the file's own.
  let text = "";
  let from = 0;
  let linesRemoved = 0;
  let linesAdded = 0;
  let replaced = "";
  // The lines each span touched, before and after (0-based): where the diff looks. lineDelta: lines added so far.
  const changes: ChangedLines[] = [];
  let scanned = 0;
  let line = 0;
  let lineDelta = 0;
  for (const span of match.spans) {
    const start = originalOffset(normalized, span.start);
    const end = originalOffset(normalized, span.end);
    const matched = normalized.text.slice(span.start, span.end);
    const put = match.wholeLines ? reindent(replacement, old, matched) : replacement;
    const newline = firstNewlineIn(decoded.text, start, end) ?? decoded.newline;
    text += decoded.text.slice(from, start) + convertNewlines(put, newline);
    from = end;
    line += countNewlines(normalized.text, scanned, span.start);
    const removed = countNewlines(matched, 0, matched.length);
    const added = countNewlines(put, 0, put.length);
    changes.push({ before: [line, line + removed + 1], after: [line + lineDelta, line + lineDelta + added + 1] });
    lineDelta += added - removed;
    line += removed;
    scanned = span.end;
    linesRemoved += removed + 1;
    linesAdded += added + 1;
    replaced = matched;
  }
  text += decoded.text.slice(from);
  const bytes = encodeText(text, decoded.encoding);
  if (bytes.equals(previous)) {
    // A tolerant match can find new itself (old differed from it only in the drift the strategy ignores).
    throw new ToolError(
      ErrorCode.editNoChange,
      `The text old matched (${match.strategy}, line ${changes[0]!.before[0] + 1}) already reads as new; nothing to change.`,
      {
        detail: { path: display, matchedBy: match.strategy },
        retryable: false,
      },
    );
  }
  // The diff is computed from the bytes that will be on disk, decoded the way the file was.
  // Well-formed text in a UTF-8 file decodes back to itself: only other encodings, or a lone surrogate that
  // encoding turned into U+FFFD, need the bytes decoded again (a 10 MB decode).
  const unchanged = decoded.encoding.startsWith("utf-8") && isWellFormed(text);
  const after = normalizeNewlines(unchanged ? text : decodeForEdit(bytes, display).text);
  const answer: PlannedAnswer = {
    ok: true,
    path: display,
    line: changes[0]!.before[0] + 1,
    linesRemoved,
    linesAdded,
    encoding: decoded.encoding,
    newline: decoded.style,
    matchedBy: match.strategy,
    ...(match.strategy === "exact"
      ? {}
      : {
          replaced:
            replaced.length > MAX_SHOWN_REPLACED_CHARS ? `${replaced.slice(0, MAX_SHOWN_REPLACED_CHARS)}…` : replaced,
        }),
    ...(all ? { occurrences: match.spans.length } : {}),
    ...diffFields(display, normalized.text, after, changes),
  };
  return { kind: "planned", bytes, answer };
}

/** String.prototype.isWellFormed (Node 20's V8 has it; the TypeScript lib in use does not declare it yet). */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let at = text.indexOf("\n", from); at !== -1 && at < to; at = text.indexOf("\n", at + 1)) n++;
  return n;
}

/** The diff fields of an answer: the unified diff over the touched lines, clipped to MAX_DIFF_CHARS. */
export function diffFields(
  display: string,
  before: string,
  after: string,
  changes: ChangedLines[],
): { diff?: string; diffTruncated?: true } {
  const found = unifiedDiff(display, before, after, changes);
  if (!found) return {};
  return { diff: found.diff, ...(found.truncated ? { diffTruncated: true as const } : {}) };
}
