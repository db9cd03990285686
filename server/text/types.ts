// The text codec's vocabulary, shared by the read tools (lossy view) and the mutations (exact round trip).

/**
 * Encodings the codec decodes and writes back: UTF-8 with or without BOM, UTF-16 LE/BE with BOM or (guessed
 * by detect.ts's sniff) without, UTF-32 LE/BE with BOM. The BOM is part of the encoding: writing one back
 * writes the BOM it names, so a file keeps it, or keeps having none.
 */
export const TEXT_ENCODINGS = [
  "utf-8",
  "utf-8-bom",
  "utf-16le",
  "utf-16be",
  "utf-16le-no-bom",
  "utf-16be-no-bom",
  "utf-32le",
  "utf-32be",
] as const;

export type TextEncoding = (typeof TEXT_ENCODINGS)[number];

/** One newline sequence. */
export type Newline = "\n" | "\r\n" | "\r";

/** A file's newlines: one kind throughout, several kinds (mixed), or none at all. */
export type NewlineStyle = "lf" | "crlf" | "cr" | "mixed" | "none";

/** How many of each newline a text holds; a CR directly before an LF counts once, as CRLF. */
export interface NewlineCounts {
  lf: number;
  crlf: number;
  cr: number;
}
