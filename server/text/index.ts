// The text codec: one detector (BOM, binary, newlines), a lossy decoder for what reads show, an exact decoder
// and encoder for what mutations round-trip byte for byte, and lines over the lossy view.
export type { DetectedEncoding, Newline, NewlineCounts, NewlineStyle, TextEncoding } from "./types.js";
export { countNewlines, detectEncoding, detectNewlines, dominantNewline, newlineStyleOf, type Detection } from "./detect.js";
export { decodeExact, decodeForEdit, decodeLossy, diskOffsetOf, type BinaryFile, type DecodedText, type DecodeOutcome, type TextFile } from "./decode.js";
export { convertNewlines, encodeText } from "./encode.js";
export { columnOfOffset, indexLines, lineContentEnd, offsetOfColumn, utf8BoundaryAtOrBefore, type LineIndex } from "./lines.js";
