import { describe, expect, it } from "vitest";
import { decodeLossy, diskOffsetOf, indexLines, type TextFile } from "../../../server/text/index.js";

const utf32 = (text: string, bigEndian: boolean) =>
  Buffer.concat([
    Buffer.from(bigEndian ? [0, 0, 0xfe, 0xff] : [0xff, 0xfe, 0, 0]),
    ...[...text].map((ch) => {
      const unit = Buffer.alloc(4);
      if (bigEndian) unit.writeUInt32BE(ch.codePointAt(0)!);
      else unit.writeUInt32LE(ch.codePointAt(0)!);
      return unit;
    }),
  ]);
const utf16 = (text: string, bigEndian: boolean) => {
  const le = Buffer.from(text, "utf16le");
  if (bigEndian) le.swap16();
  return Buffer.concat([Buffer.from(bigEndian ? [0xfe, 0xff] : [0xff, 0xfe]), le]);
};

describe("decodeLossy", () => {
  it.each([
    ["plain UTF-8", Buffer.from("héllo\n"), "utf-8", 0, "héllo\n"],
    [
      "UTF-8 with BOM",
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("héllo\n")]),
      "utf-8-bom",
      3,
      "héllo\n",
    ],
    ["UTF-16 LE with BOM", utf16("héllo 😀\r\n", false), "utf-16le", 2, "héllo 😀\r\n"],
    ["UTF-16 BE with BOM", utf16("héllo 😀\n", true), "utf-16be", 2, "héllo 😀\n"],
    ["UTF-32 LE with BOM", utf32("héllo 😀\r\n", false), "utf-32le", 4, "héllo 😀\r\n"],
    ["UTF-32 BE with BOM", utf32("héllo 😀\n", true), "utf-32be", 4, "héllo 😀\n"],
    ["UTF-32 LE with only a BOM", utf32("", false), "utf-32le", 4, ""],
    [
      "BOM-less UTF-16 LE",
      Buffer.from("héllo 😀\r\nworld\r\n", "utf16le"),
      "utf-16le-no-bom",
      0,
      "héllo 😀\r\nworld\r\n",
    ],
    ["empty file", Buffer.alloc(0), "utf-8", 0, ""],
  ])("decodes %s", (_name, bytes, encoding, bomBytes, text) => {
    const file = decodeLossy(bytes) as TextFile;
    expect(file).toMatchObject({ kind: "text", encoding, bomBytes, invalidUtf8: false });
    expect(file.utf8.toString("utf8")).toBe(text);
  });

  it.each([
    ["a NUL byte at the start", Buffer.from([0, 1, 2, 3])],
    [
      "a NUL byte deep inside text",
      Buffer.concat([Buffer.from("a".repeat(100_000)), Buffer.from([0]), Buffer.from("b")]),
    ],
    ["UTF-16 text holding U+0000", utf16("a\u0000b", false)],
    ["BOM-less UTF-16 holding U+0000", Buffer.from("plain\u0000text", "utf16le")],
    ["UTF-32 holding U+0000", Buffer.from([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0, 0, 0, 0, 0])],
  ])("reports %s as binary", (_name, bytes) => {
    expect(decodeLossy(bytes).kind).toBe("binary");
  });

  it("flags bytes that are not UTF-8 but still treats the file as text", () => {
    const file = decodeLossy(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])) as TextFile;
    expect(file).toMatchObject({ kind: "text", encoding: "utf-8", invalidUtf8: true });
    expect(file.utf8.toString("utf8")).toBe("caf\ufffd\n");
  });
});

describe("UTF-32 that does not decode", () => {
  it("shows each unit above U+10FFFF or in the surrogate range, and a trailing partial unit, as one U+FFFD", () => {
    const bytes = Buffer.concat([
      utf32("a", false),
      Buffer.from([0, 0, 0x11, 0]),
      utf32("b", false).subarray(4),
      Buffer.from([0x00, 0xd8, 0, 0]),
      utf32("\nc", false).subarray(4),
      Buffer.from([0x64, 0]),
    ]);
    const file = decodeLossy(bytes) as TextFile;
    expect(file).toMatchObject({ kind: "text", encoding: "utf-32le", invalidUtf8: false });
    expect(file.utf8.toString("utf8")).toBe("a\ufffdb\ufffd\nc\ufffd");
    // One code point per 4-byte unit even where it was replaced: the second line starts after 5 units + BOM.
    expect(diskOffsetOf(file, indexLines(file.utf8).starts[1]!)).toBe(4 + 5 * 4);
  });
});

describe("indexLines", () => {
  it.each([
    ["", 0, "none"],
    ["one line", 1, "none"],
    ["a\nb\n", 2, "lf"],
    ["a\nb", 2, "lf"],
    ["a\r\nb\r\n", 2, "crlf"],
    ["a\rb\r", 1, "cr"],
    ["a\r\nb\nc", 3, "mixed"],
    ["a\rb\nc", 2, "mixed"],
    ["\n\n\n", 3, "lf"],
  ])("%j has %i lines and %s newlines", (text, lines, newline) => {
    const index = indexLines(Buffer.from(text));
    expect(index.starts.length).toBe(lines);
    expect(index.newline).toBe(newline);
  });
});

describe("diskOffsetOf", () => {
  it.each([
    ["utf-8 with BOM", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("ab\ncd")])],
    ["utf-16le", utf16("ab\nčd😀\nx", false)],
    ["utf-16be", utf16("ab\nčd😀\nx", true)],
    ["utf-32le", utf32("ab\nčd😀\nx", false)],
    ["utf-32be", utf32("ab\nčd😀\nx", true)],
  ])("maps line starts of %s to the bytes on disk", (_name, bytes) => {
    const file = decodeLossy(bytes) as TextFile;
    const index = indexLines(file.utf8);
    const second = index.starts[1]!;
    const unit = file.encoding.startsWith("utf-32") ? 4 : file.encoding.startsWith("utf-16") ? 2 : 1;
    expect(diskOffsetOf(file, second)).toBe(file.bomBytes + 3 * unit);
    expect(diskOffsetOf(file, file.utf8.length)).toBe(bytes.length);
  });
});
