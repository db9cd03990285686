// The text codec: one detector (BOM, BOM-less UTF-16, binary, newlines), a lossy decoder for what reads show,
// an exact decoder and encoder for what mutations round-trip byte for byte, and lines over the lossy view.
export { TEXT_ENCODINGS, type Newline, type NewlineCounts, type NewlineStyle, type TextEncoding } from "./types.js";
export { ENCODING_FACTS, ripgrepSearches, type EncodingFacts } from "./encodings.js";
export { MIN_SNIFF_BYTES, SNIFF_SAMPLE_BYTES, sniffUtf16, type BomlessUtf16 } from "./sniff-utf16.js";
export {
  countNewlines,
  detectEncoding,
  detectNewlines,
  dominantNewline,
  newlineStyleOf,
  type Detection,
} from "./detect.js";
export {
  decodeExact,
  decodeForEdit,
  decodeLossy,
  diskOffsetOf,
  type BinaryFile,
  type DecodedText,
  type DecodeOutcome,
  type TextFile,
} from "./decode.js";
export { convertNewlines, encodeText } from "./encode.js";
export {
  columnOfOffset,
  indexLines,
  lineContentEnd,
  offsetOfColumn,
  utf8BoundaryAtOrBefore,
  type LineIndex,
} from "./lines.js";
