// Nearest current lines for a stale /e: the window of the file most like old (line by line, character-bigram
// similarity), the runner-up window, and the lines where old matches ignoring indentation, so the answer can show
// what is there now and, when the best window clearly wins, a guarded retry that replaces exactly those lines.
// One streaming pass over the text: no per-line objects are kept (only old's lines and a ring of window scores),
// so memory stays O(old + one line) whatever the file's size; the pass stops at a comparison and a time budget.
// Pure: it runs in the nearest-worker thread (nearest-worker.ts), and in unit tests directly.
import { createHash } from "node:crypto";

/** Lines of context shown around the nearest window, and the whole file when it is at most this many lines. */
export const CONTEXT_LINES = 2;
const WHOLE_FILE_LINES = 12;
/** Shown excerpt bound, in characters (a long line is cut; the retry still carries the exact text). */
const MAX_EXCERPT_CHARS = 2000;
/** Line comparisons (old's lines x the file's lines) spent searching; past it the search stops, incomplete. */
export const MAX_COMPARISONS = 8_000_000;
/** A window this similar on average (0..1) is offered as a retry; below it only the excerpt is shown. */
export const RETRY_SIMILARITY = 0.6;
/**
 * A retry is offered only when the best window beats every other window by at least this much mean similarity:
 * a near-identical neighbour (a sibling's docstring, a generated file's repeated block) is no retry target.
 */
export const RETRY_MARGIN = 0.15;
/** Shortest/longest trimmed length of old's edge lines and the window's, for wholeLines. */
const LENGTH_RATIO = 0.6;
/** Lines listed where old matches ignoring leading and trailing whitespace. */
const MAX_LOOSE_LINES = 20;

export interface NearestLines {
  /** 1-based first and last line of the window most like old. */
  startLine: number;
  endLine: number;
  /** Mean line similarity of that window to old, 0..1, two decimals. */
  similarity: number;
  /** The best other window (any other first line): its first line and mean similarity; absent when there is none. */
  runnerUp?: { startLine: number; similarity: number };
  /** The window's exact current text (newlines as "\n"), ending with "\n" when old did. */
  text: string;
  /** The window with CONTEXT_LINES either side (or the whole small file), each line prefixed "N: ". */
  excerpt: string;
  excerptStartLine: number;
  /**
   * The window's first and last lines are about as long as old's (trimmed): old was whole lines, not a fragment
   * of one, so replacing the whole window cannot drop text old never named.
   */
  wholeLines: boolean;
  /** blockHash of the window as it is now (see blockHash): a retry carries it, and applies only where it still holds. */
  hash: string;
}

export interface NearestSearch {
  /** Undefined only for an empty file. */
  nearest?: NearestLines;
  /** false: the search stopped at its comparison or time budget, so a better window may lie further on. */
  complete: boolean;
  /** 1-based lines where old matches ignoring leading/trailing whitespace (first MAX_LOOSE_LINES). */
  looseLines: number[];
}

export interface SearchBudget {
  maxComparisons?: number;
  /** performance.now() past which the pass stops (checked every 256 lines). */
  deadline?: number;
}

/** The windows of text most like old, and old's loose matches, in one pass within the budget. */
export function searchNearest(text: string, old: string, budget: SearchBudget = {}): NearestSearch {
  const maxComparisons = budget.maxComparisons ?? MAX_COMPARISONS;
  const deadline = budget.deadline ?? Number.POSITIVE_INFINITY;
  const trailingNewline = old.endsWith("\n");
  const want = (trailingNewline ? old.slice(0, -1) : old).split("\n");
  const loose = looseWant(old);
  const lineCount = countLines(text);
  if (lineCount === 0) return { complete: true, looseLines: [] };
  const size = Math.min(want.length, lineCount);
  const wantGrams = want.map(bigrams);
  // Ring buffers over the last `size` lines: partial window scores and line starts, by window start % size.
  const scores = new Float64Array(size);
  const starts = new Float64Array(size);
  const recent: string[] = new Array<string>(loose.length);
  const looseLines: number[] = [];
  let best = { start: -1, score: -1, offset: 0 };
  let second = { start: -1, score: -1 };
  let spent = 0;
  let complete = true;
  let at = 0;
  for (let i = 0; i < lineCount; i++) {
    if ((i & 255) === 0 && i > 0 && (spent > maxComparisons || performance.now() > deadline)) {
      complete = false;
      break;
    }
    const nl = text.indexOf("\n", at);
    const end = nl === -1 ? text.length : nl;
    const line = text.slice(at, end);
    starts[i % size] = at;
    const grams = bigrams(line);
    // Line i is line j of the window starting at i - j.
    for (let j = Math.max(0, i - (lineCount - size)); j < size && j <= i; j++)
      scores[(i - j) % size]! += dice(wantGrams[j]!, grams);
    spent += size;
    const done = i - size + 1;
    if (done >= 0) {
      const slot = done % size;
      const score = scores[slot]!;
      scores[slot] = 0;
      if (score > best.score) {
        if (best.start >= 0) second = { start: best.start, score: best.score };
        best = { start: done, score, offset: starts[slot]! };
      } else if (score > second.score) {
        second = { start: done, score };
      }
    }
    if (loose.length > 0 && looseLines.length < MAX_LOOSE_LINES) {
      recent[i % loose.length] = line.trim();
      const first = i - loose.length + 1;
      if (first >= 0 && looseMatch(loose, recent, first)) looseLines.push(first + 1);
    }
    at = end + 1;
  }
  if (best.start < 0) return { complete, looseLines };
  const window = windowAt(text, best.offset, size);
  const startLine = best.start + 1;
  const endLine = best.start + size;
  // old ending in a newline keeps the window's own newline, when the window's last line has one.
  const followedByNewline = window.end < text.length;
  const excerpt = excerptAround(text, best.offset, startLine, size, lineCount);
  return {
    complete,
    looseLines,
    nearest: {
      startLine,
      endLine,
      similarity: mean(best.score, want.length),
      ...(second.start >= 0
        ? { runnerUp: { startLine: second.start + 1, similarity: mean(second.score, want.length) } }
        : {}),
      text: window.lines.join("\n") + (trailingNewline && followedByNewline ? "\n" : ""),
      excerpt: excerpt.text,
      excerptStartLine: excerpt.startLine,
      wholeLines:
        alikeLength(want[0]!, window.lines[0]!) &&
        alikeLength(want[size - 1]!, window.lines[size - 1]!) &&
        want.length === size,
      hash: blockHash(text, best.offset, size),
    },
  };
}

/** searchNearest's best window alone, unbudgeted (unit tests and small texts). */
export function nearestLines(text: string, old: string): NearestLines | undefined {
  return searchNearest(text, old).nearest;
}

/**
 * Why the best window may be offered as a retry target, or undefined when it may not: it is similar enough, whole
 * lines, the search saw the whole file, and it beats the runner-up by RETRY_MARGIN.
 */
export function retryRefusal(search: NearestSearch): string | undefined {
  const near = search.nearest;
  if (!near || near.text.length === 0) return "no nearest lines";
  if (!search.complete) return "the search stopped before the end of the file";
  if (near.similarity < RETRY_SIMILARITY) return `similarity ${near.similarity} is below ${RETRY_SIMILARITY}`;
  if (!near.wholeLines) return "old looks like a fragment of a longer line";
  if (near.runnerUp && near.similarity - near.runnerUp.similarity < RETRY_MARGIN) {
    return `lines ${near.runnerUp.startLine}-${near.runnerUp.startLine + near.endLine - near.startLine} are nearly as similar (${near.runnerUp.similarity}); the margin ${marginOf(near)} is under ${RETRY_MARGIN}`;
  }
  return undefined;
}

/** Best similarity minus the runner-up's, two decimals (the best's own when there is no other window). */
export function marginOf(near: NearestLines): number {
  return Math.round((near.similarity - (near.runnerUp?.similarity ?? 0)) * 100) / 100;
}

/**
 * A fingerprint of `size` lines starting at character `offset` of text (newlines as "\n"), with CONTEXT_LINES of
 * context either side: 16 hex digits of SHA-256. A guarded retry applies only where the lines it replaces, and
 * the lines around them the excerpt showed, are still these.
 */
export function blockHash(text: string, offset: number, size: number): string {
  let from = offset;
  for (let k = 0; k < CONTEXT_LINES && from > 0; k++) from = previousLineStart(text, from);
  let to = offset;
  for (let k = 0; k < size + CONTEXT_LINES && to <= text.length; k++) {
    const nl = text.indexOf("\n", to);
    to = nl === -1 ? text.length + 1 : nl + 1;
  }
  return createHash("sha256")
    .update(text.slice(from, Math.min(to, text.length)))
    .digest("hex")
    .slice(0, 16);
}

/** Lines counted as /r counts them: a final newline ends the last line instead of starting an empty one. */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 1;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) n++;
  return text.endsWith("\n") ? n - 1 : n;
}

/** Start of the line before the one starting at lineStart (> 0). */
function previousLineStart(text: string, lineStart: number): number {
  return lineStart <= 1 ? 0 : text.lastIndexOf("\n", lineStart - 2) + 1;
}

function mean(score: number, lines: number): number {
  return Math.round((Math.max(0, score) / Math.max(1, lines)) * 100) / 100;
}

/** `size` lines from offset, and where the last one ends. */
function windowAt(text: string, offset: number, size: number): { lines: string[]; end: number } {
  const lines: string[] = [];
  let at = offset;
  let end = offset;
  for (let k = 0; k < size; k++) {
    const nl = text.indexOf("\n", at);
    end = nl === -1 ? text.length : nl;
    lines.push(text.slice(at, end));
    at = end + 1;
  }
  return { lines, end };
}

/** The window with CONTEXT_LINES either side (the whole file when small), each line "N: text", cut at MAX_EXCERPT_CHARS. */
function excerptAround(
  text: string,
  offset: number,
  startLine: number,
  size: number,
  lineCount: number,
): { text: string; startLine: number } {
  const small = lineCount <= WHOLE_FILE_LINES;
  let from = small ? 0 : offset;
  let first = small ? 1 : startLine;
  while (!small && first > 1 && first > startLine - CONTEXT_LINES) {
    from = previousLineStart(text, from);
    first--;
  }
  const count = small ? lineCount : Math.min(lineCount, startLine + size - 1 + CONTEXT_LINES) - first + 1;
  const shown: string[] = [];
  let chars = 0;
  let at = from;
  for (let k = 0; k < count && chars <= MAX_EXCERPT_CHARS; k++) {
    const nl = text.indexOf("\n", at);
    const end = nl === -1 ? text.length : nl;
    const line = `${first + k}: ${text.slice(at, Math.min(end, at + MAX_EXCERPT_CHARS))}`;
    shown.push(line);
    chars += line.length + 1;
    at = end + 1;
  }
  let excerpt = shown.join("\n");
  if (excerpt.length > MAX_EXCERPT_CHARS) excerpt = `${excerpt.slice(0, MAX_EXCERPT_CHARS)}…`;
  return { text: excerpt, startLine: first };
}

/** old's lines, trimmed, for the loose match (trailing blank lines dropped). */
function looseWant(old: string): string[] {
  const want = old.split("\n").map((l) => l.trim());
  while (want.length > 1 && want[want.length - 1] === "") want.pop();
  return want;
}

/** old's trimmed lines against the trimmed file lines from `first` (kept in a ring by index % want.length). */
function looseMatch(want: string[], recent: string[], first: number): boolean {
  const n = want.length;
  for (let j = 0; j < n; j++) {
    const w = want[j]!;
    const line = recent[(first + j) % n]!;
    const ok =
      n === 1
        ? w.length > 0 && line.includes(w)
        : j === 0
          ? line.endsWith(w)
          : j === n - 1
            ? line.startsWith(w)
            : line === w;
    if (!ok) return false;
  }
  return true;
}

/** Trimmed lengths within LENGTH_RATIO of each other. */
function alikeLength(a: string, b: string): boolean {
  const x = a.trim().length;
  const y = b.trim().length;
  return Math.min(x, y) >= LENGTH_RATIO * Math.max(x, y);
}

/**
 * Character bigrams of a line with its indentation and trailing spaces ignored, as a sorted array of packed code
 * unit pairs (a one-character line is its one character, negated so it equals no pair).
 */
function bigrams(line: string): Int32Array {
  const s = line.trim();
  if (s.length === 1) return Int32Array.of(-1 - s.charCodeAt(0));
  const grams = new Int32Array(Math.max(0, s.length - 1));
  for (let i = 0; i + 1 < s.length; i++) grams[i] = (s.charCodeAt(i) << 16) | s.charCodeAt(i + 1);
  return grams.sort();
}

/** Sørensen–Dice coefficient of two sorted bigram multisets; two blank lines are identical. */
function dice(a: Int32Array, b: Int32Array): number {
  if (a.length === 0 && b.length === 0) return 1;
  let shared = 0;
  for (let i = 0, j = 0; i < a.length && j < b.length;) {
    if (a[i] === b[j]) {
      shared++;
      i++;
      j++;
    } else if (a[i]! < b[j]!) i++;
    else j++;
  }
  return (2 * shared) / (a.length + b.length);
}
