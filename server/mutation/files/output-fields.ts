// Zod fields the file tools' output schemas share: the text encoding and newline style a file keeps, checked
// against the text codec's own types so a new encoding or style fails the build here.
import { z } from "zod";
import type { NewlineStyle, TextEncoding } from "../../text/index.js";

const TEXT_ENCODINGS = [
  "utf-8",
  "utf-8-bom",
  "utf-16le",
  "utf-16be",
  "utf-16le-no-bom",
  "utf-16be-no-bom",
  "utf-32le",
  "utf-32be",
] as const satisfies readonly TextEncoding[];
const NEWLINE_STYLES = ["lf", "crlf", "cr", "mixed", "none"] as const satisfies readonly NewlineStyle[];
type Unlisted = Exclude<TextEncoding, (typeof TEXT_ENCODINGS)[number]> | Exclude<NewlineStyle, (typeof NEWLINE_STYLES)[number]>;
const everyValueListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyValueListed;

export const textEncodingField = z.enum(TEXT_ENCODINGS);
export const newlineStyleField = z.enum(NEWLINE_STYLES);

/** A path as the agent names it, under /project. */
export const projectPathField = z.string().describe("The file as /project/<relative path>; give it to /r to read it.");
