// Applies located hunks to a decoded file, line by line: context lines keep the file's own bytes (even when
// matched whitespace-tolerantly), new lines take the file's newline, and the final-newline state is kept.
import type { DecodedText } from "../../../text/index.js";
import type { LocatedHunk } from "./locate.js";

interface FileLine {
  text: string;
  eol: string;
}

export function splitLines(text: string): FileLine[] {
  const lines: FileLine[] = [];
  const pattern = /\r\n|\r|\n/g;
  let start = 0;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    lines.push({ text: text.slice(start, m.index), eol: m[0] });
    start = m.index + m[0].length;
  }
  if (start < text.length) lines.push({ text: text.slice(start), eol: "" });
  return lines;
}

export interface AppliedHunks {
  text: string;
  added: number;
  removed: number;
}

export function applyHunks(decoded: DecodedText, located: LocatedHunk[]): AppliedHunks {
  const lines = splitLines(decoded.text);
  const endsWithNewline = lines.length === 0 || lines[lines.length - 1]!.eol !== "";
  const out: FileLine[] = [];
  let pos = 0;
  let added = 0;
  let removed = 0;
  for (const { hunk, start, length } of located) {
    out.push(...lines.slice(pos, start));
    let k = start;
    for (const line of hunk.lines) {
      if (line.op === " ") out.push(lines[k++]!);
      else if (line.op === "-") {
        k++;
        removed++;
      } else {
        out.push({ text: line.text, eol: decoded.newline });
        added++;
      }
    }
    pos = start + length;
  }
  out.push(...lines.slice(pos));
  for (let i = 0; i < out.length - 1; i++)
    if (out[i]!.eol === "") out[i] = { text: out[i]!.text, eol: decoded.newline };
  const last = out[out.length - 1];
  if (last) out[out.length - 1] = { text: last.text, eol: endsWithNewline ? last.eol || decoded.newline : "" };
  return { text: out.map((l) => l.text + l.eol).join(""), added, removed };
}

export function linesToText(lines: string[]): string {
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}
