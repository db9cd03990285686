// The text codec's vocabulary, shared by the read tools (lossy view) and the mutations (exact round trip).

/** Encodings the codec decodes and writes back: UTF-8 with or without BOM, UTF-16 LE/BE with BOM. */
export type TextEncoding = "utf-8" | "utf-8-bom" | "utf-16le" | "utf-16be";

/** What detection can find: a TextEncoding, or a UTF-32 BOM, recognised but neither shown nor edited yet. */
export type DetectedEncoding = TextEncoding | "utf-32le" | "utf-32be";

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
