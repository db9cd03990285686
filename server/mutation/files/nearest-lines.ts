// Nearest current lines for a stale /e: the window of the file most like old (line by line, character-bigram
// similarity), so the answer can show what is there now and a retry that replaces exactly those lines.

/** Lines of context shown around the nearest window, and the whole file when it is at most this many lines. */
const CONTEXT_LINES = 2;
const WHOLE_FILE_LINES = 12;
/** Shown excerpt bound, in characters (a long line is cut; the retry still carries the exact text). */
const MAX_EXCERPT_CHARS = 2000;
/** Line comparisons spent searching; past it the search stops at the best window found so far. */
const MAX_COMPARISONS = 400_000;
/** A window this similar on average (0..1) is offered as a retry; below it only the excerpt is shown. */
export const RETRY_SIMILARITY = 0.6;
/** Shortest/longest trimmed length of old's edge lines and the window's, for wholeLines. */
const LENGTH_RATIO = 0.6;

export interface NearestLines {
  /** 1-based first and last line of the window most like old. */
  startLine: number;
  endLine: number;
  /** Mean line similarity of that window to old, 0..1, two decimals. */
  similarity: number;
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
}

/** The window of text most like old; undefined only for an empty file. */
export function nearestLines(text: string, old: string): NearestLines | undefined {
  if (text.length === 0) return undefined;
  const trailingNewline = old.endsWith("\n");
  const want = (trailingNewline ? old.slice(0, -1) : old).split("\n");
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const size = Math.min(want.length, lines.length);
  const wantGrams = want.map(bigrams);
  const lineGrams = lines.map(bigrams);
  let best = { start: 0, score: -1 };
  let spent = 0;
  for (let start = 0; start + size <= lines.length && spent < MAX_COMPARISONS; start++) {
    let score = 0;
    for (let j = 0; j < size; j++) score += dice(wantGrams[j]!, lineGrams[start + j]!);
    spent += size;
    if (score > best.score) best = { start, score };
  }
  const startLine = best.start + 1;
  const endLine = best.start + size;
  // old ending in a newline keeps the window's own newline, when the window's last line has one.
  const followedByNewline = endLine < lines.length || text.endsWith("\n");
  const windowText = lines.slice(best.start, best.start + size).join("\n") + (trailingNewline && followedByNewline ? "\n" : "");
  const small = lines.length <= WHOLE_FILE_LINES;
  const from = small ? 0 : Math.max(0, best.start - CONTEXT_LINES);
  const to = small ? lines.length : Math.min(lines.length, best.start + size + CONTEXT_LINES);
  let excerpt = lines.slice(from, to).map((l, i) => `${from + i + 1}: ${l}`).join("\n");
  if (excerpt.length > MAX_EXCERPT_CHARS) excerpt = `${excerpt.slice(0, MAX_EXCERPT_CHARS)}…`;
  return {
    startLine,
    endLine,
    similarity: Math.round((Math.max(0, best.score) / Math.max(1, want.length)) * 100) / 100,
    text: windowText,
    excerpt,
    excerptStartLine: from + 1,
    wholeLines: alikeLength(want[0]!, lines[best.start]!) && alikeLength(want[size - 1]!, lines[best.start + size - 1]!) && want.length === size,
  };
}

/** Trimmed lengths within LENGTH_RATIO of each other. */
function alikeLength(a: string, b: string): boolean {
  const x = a.trim().length;
  const y = b.trim().length;
  return Math.min(x, y) >= LENGTH_RATIO * Math.max(x, y);
}

/** Character bigrams of a line with its indentation and trailing spaces ignored, counted. */
function bigrams(line: string): Map<string, number> {
  const s = line.trim();
  const grams = new Map<string, number>();
  if (s.length === 1) grams.set(s, 1);
  for (let i = 0; i + 1 < s.length; i++) {
    const g = s.slice(i, i + 2);
    grams.set(g, (grams.get(g) ?? 0) + 1);
  }
  return grams;
}

/** Sørensen–Dice coefficient of two bigram multisets; two blank lines are identical. */
function dice(a: Map<string, number>, b: Map<string, number>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  let total = 0;
  for (const [g, n] of a) {
    total += n;
    shared += Math.min(n, b.get(g) ?? 0);
  }
  for (const n of b.values()) total += n;
  return total === 0 ? 0 : (2 * shared) / total;
}
