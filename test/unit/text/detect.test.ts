import { describe, expect, it } from "vitest";
import {
  countNewlines,
  decodeExact,
  decodeLossy,
  detectEncoding,
  detectNewlines,
  indexLines,
} from "../../../server/text/index.js";
import { pick, seededRandom } from "../../helpers/seeded-random.js";

const bytes = (...parts: Array<number[] | string>) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : Buffer.from(p))));
const utf16le = (text: string) => Buffer.from(text, "utf16le");
const utf16be = (text: string) => Buffer.from(text, "utf16le").swap16();

describe("detectEncoding", () => {
  it.each([
    ["no BOM", bytes("abc"), "utf-8", 0],
    ["an empty file", Buffer.alloc(0), "utf-8", 0],
    ["a UTF-8 BOM", bytes([0xef, 0xbb, 0xbf], "abc"), "utf-8-bom", 3],
    ["a UTF-16 LE BOM", Buffer.concat([bytes([0xff, 0xfe]), utf16le("abc")]), "utf-16le", 2],
    ["a UTF-16 BE BOM", Buffer.concat([bytes([0xfe, 0xff]), utf16be("abc")]), "utf-16be", 2],
    ["a UTF-32 LE BOM (which starts like UTF-16 LE's)", bytes([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0]), "utf-32le", 4],
    ["a UTF-32 BE BOM", bytes([0, 0, 0xfe, 0xff, 0, 0, 0, 0x61]), "utf-32be", 4],
    ["a UTF-16 LE BOM alone", bytes([0xff, 0xfe]), "utf-16le", 2],
    ["half a UTF-8 BOM", bytes([0xef, 0xbb]), "utf-8", 0],
  ])("recognises %s", (_name, input, encoding, bomBytes) => {
    expect(detectEncoding(input)).toMatchObject({ encoding, bomBytes });
  });

  it.each([
    ["UTF-8 text", bytes("héllo\n"), false],
    ["a NUL byte in UTF-8", bytes("a", [0], "b"), true],
    ["a NUL byte after a UTF-8 BOM", bytes([0xef, 0xbb, 0xbf, 0]), true],
    [
      "UTF-16 text, whose ASCII has zero bytes but no zero unit",
      Buffer.concat([bytes([0xff, 0xfe]), utf16le("a\u0100b")]),
      false,
    ],
    ["UTF-16 LE holding U+0000", Buffer.concat([bytes([0xff, 0xfe]), utf16le("a\u0000b")]), true],
    ["UTF-16 BE holding U+0000", Buffer.concat([bytes([0xfe, 0xff]), utf16be("a\u0000b")]), true],
    ["UTF-16 with two zero bytes straddling two units", bytes([0xff, 0xfe, 0x61, 0x00, 0x00, 0x62]), false],
    ["UTF-16 with a trailing odd zero byte", bytes([0xff, 0xfe, 0x61, 0x00, 0x00]), false],
    ["UTF-16 without a BOM (sniffed as UTF-16, so its zero bytes are no NULs)", utf16le("plain"), false],
    ["UTF-32 with a BOM", bytes([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0]), false],
    ["UTF-32 holding U+0000", bytes([0, 0, 0xfe, 0xff, 0, 0, 0, 0x61, 0, 0, 0, 0]), true],
    ["UTF-32 with a trailing partial zero unit", bytes([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0, 0, 0]), false],
  ])("tells whether %s is binary", (_name, input, binary) => {
    expect(detectEncoding(input).binary).toBe(binary);
  });
});

describe("newline detection", () => {
  it.each([
    ["a\nb\n", "lf", "\n"],
    ["a\r\nb\r\n", "crlf", "\r\n"],
    ["a\rb\r", "cr", "\r"],
    ["a\r\nb\nc\r\n", "mixed", "\r\n"],
    ["a\nb\r\nc\n", "mixed", "\n"],
    ["a\rb\rc\n", "mixed", "\r"],
    ["a\r\nb\n", "mixed", "\n"],
    ["abc", "none", "\n"],
    ["", "none", "\n"],
  ])("finds %j %s, dominated by %j", (text, style, newline) => {
    expect(detectNewlines(text)).toEqual({ style, newline });
  });

  it.each(["", "abc", "a\nb\n", "a\r\nb\r\n", "a\rb\r", "a\r\nb\nc", "a\rb\nc", "\r\r\n\n"])(
    "reads and mutations agree on the style of %j",
    (text) => {
      expect(indexLines(Buffer.from(text)).newline).toBe(detectNewlines(text).style);
    },
  );

  it("counts LF, CRLF and lone CR as reading every character would (500 seeded texts)", () => {
    const byCharacter = (text: string) => {
      const counts = { lf: 0, crlf: 0, cr: 0 };
      for (let i = 0; i < text.length; i++) {
        if (text[i] === "\r") {
          if (text[i + 1] === "\n") {
            counts.crlf++;
            i++;
          } else counts.cr++;
        } else if (text[i] === "\n") counts.lf++;
      }
      return counts;
    };
    const rand = seededRandom(28);
    for (let n = 0; n < 500; n++) {
      const text = Array.from({ length: Math.floor(rand() * 40) }, () =>
        pick(rand, ["a", "\r", "\n", "\r\n", "bc"]),
      ).join("");
      expect(countNewlines(text), JSON.stringify(text)).toEqual(byCharacter(text));
    }
  });
});

describe("UTF-32", () => {
  // Shown and edited since the codec learnt UTF-32 (it was recognised by its BOM but treated as binary before).
  it.each([
    ["LE", bytes([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0, 0x0a, 0, 0, 0]), "utf-32le"],
    ["BE", bytes([0, 0, 0xfe, 0xff, 0, 0, 0, 0x61, 0, 0, 0, 0x0a]), "utf-32be"],
  ])("%s is recognised, shown as text, and decoded for a rewrite", (_name, input, encoding) => {
    expect(decodeLossy(input)).toMatchObject({ kind: "text", encoding, bomBytes: 4 });
    expect(decodeExact(input)).toEqual({ ok: true, decoded: { text: "a\n", encoding, newline: "\n", style: "lf" } });
  });
});
