// Zod fields the file tools' output schemas share: the text encoding and newline style a file keeps. The
// encodings are the codec's own list; the newline styles are checked against its type, so a new one fails here.
import { z } from "zod";
import { TEXT_ENCODINGS, type NewlineStyle } from "../../text/index.js";

const NEWLINE_STYLES = ["lf", "crlf", "cr", "mixed", "none"] as const satisfies readonly NewlineStyle[];
type Unlisted = Exclude<NewlineStyle, (typeof NEWLINE_STYLES)[number]>;
const everyValueListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyValueListed;

export const textEncodingField = z.enum(TEXT_ENCODINGS);
export const newlineStyleField = z.enum(NEWLINE_STYLES);

/** A path as the agent names it, under /project. */
export const projectPathField = z.string().describe("The file as /project/<relative path>; give it to /r to read it.");
