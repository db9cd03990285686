// Newline-tolerant matching for edit: text is matched with every CRLF/CR/LF seen as "\n", so an agent's
// "\n" matches a CRLF file, while offsets map back to the original text for a byte-exact splice.

export interface NormalizedText {
  /** The text with every CRLF and CR turned into LF. */
  text: string;
  /**
   * offsets[k]: index in the original of normalized character k; offsets[text.length]: original length. Undefined
   * when the original holds no CR: the text is the original and every offset its own (originalOffset).
   */
  offsets: Int32Array | undefined;
}

/**
 * Most files hold no CR: their text is its own normalized form, with no copy and no 4-bytes-a-character offset
 * table (400 MB and ~1 s on the event loop for a 100 MB file, issue 28).
 */
export function normalizeWithOffsets(original: string): NormalizedText {
  if (original.indexOf("\r") === -1) return { text: original, offsets: undefined };
  const offsets = new Int32Array(original.length + 1);
  let text = "";
  let k = 0;
  let chunkStart = 0;
  for (let i = 0; i < original.length; i++) {
    if (original.charCodeAt(i) !== 13) {
      offsets[k++] = i;
      continue;
    }
    text += original.slice(chunkStart, i) + "\n";
    offsets[k++] = i;
    if (original.charCodeAt(i + 1) === 10) i++;
    chunkStart = i + 1;
  }
  text += original.slice(chunkStart);
  offsets[k] = original.length;
  return { text, offsets: offsets.subarray(0, k + 1) };
}

/** Index in the original text of normalized character k. */
export function originalOffset(normalized: NormalizedText, k: number): number {
  return normalized.offsets === undefined ? k : normalized.offsets[k]!;
}

export function normalizeNewlines(text: string): string {
  // Most texts hold no CR: a scan for one is far cheaper than the regular expression over a large file.
  return text.indexOf("\r") === -1 ? text : text.replace(/\r\n?/g, "\n");
}

/** Start indexes of every occurrence of needle, overlapping ones included (so "aa" in "aaa" is ambiguous). */
export function findOccurrences(haystack: string, needle: string, limit = Number.POSITIVE_INFINITY): number[] {
  const found: number[] = [];
  if (needle.length === 0) return found;
  for (let at = haystack.indexOf(needle); at !== -1 && found.length < limit; at = haystack.indexOf(needle, at + 1))
    found.push(at);
  return found;
}

/** 1-based line number of a normalized index. */
export function lineAt(normalized: string, index: number): number {
  let line = 1;
  for (let at = normalized.indexOf("\n"); at !== -1 && at < index; at = normalized.indexOf("\n", at + 1)) line++;
  return line;
}

/** The first newline sequence inside original[start, end), if any. */
export function firstNewlineIn(original: string, start: number, end: number): "\n" | "\r\n" | "\r" | undefined {
  for (let i = start; i < end; i++) {
    const c = original.charCodeAt(i);
    if (c === 10) return "\n";
    if (c === 13) return original.charCodeAt(i + 1) === 10 ? "\r\n" : "\r";
  }
  return undefined;
}
