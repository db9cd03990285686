import { describe, expect, it } from "vitest";
import {
  convertNewlines,
  decodeExact,
  decodeForEdit,
  detectNewlines,
  encodeText,
  type TextEncoding,
} from "../../../server/text/index.js";

const SAMPLE = "héllo → wörld 😀";

describe("decodeExact", () => {
  it.each<[TextEncoding, string]>([
    ["utf-8", "\n"],
    ["utf-8", "\r\n"],
    ["utf-8", "\r"],
    ["utf-8-bom", "\r\n"],
    ["utf-16le", "\r\n"],
    ["utf-16le", "\n"],
    ["utf-16be", "\n"],
    ["utf-16be", "\r"],
    ["utf-16le-no-bom", "\r\n"],
    ["utf-16le-no-bom", "\n"],
    ["utf-16be-no-bom", "\r\n"],
    ["utf-16be-no-bom", "\n"],
    ["utf-32le", "\r\n"],
    ["utf-32le", "\n"],
    ["utf-32be", "\r\n"],
    ["utf-32be", "\n"],
    ["utf-32be", "\r"],
  ])("round-trips %s with %j newlines byte-exactly", (encoding, newline) => {
    const text = [SAMPLE, "line two", ""].join(newline);
    const bytes = encodeText(text, encoding);
    const outcome = decodeExact(bytes);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.decoded.encoding).toBe(encoding);
    expect(outcome.decoded.newline).toBe(newline);
    expect(encodeText(outcome.decoded.text, outcome.decoded.encoding).equals(bytes)).toBe(true);
  });

  it("writes the BOMs it reads", () => {
    expect([...encodeText("a", "utf-8-bom")]).toEqual([0xef, 0xbb, 0xbf, 0x61]);
    expect([...encodeText("a", "utf-16le")]).toEqual([0xff, 0xfe, 0x61, 0x00]);
    expect([...encodeText("a", "utf-16be")]).toEqual([0xfe, 0xff, 0x00, 0x61]);
    expect([...encodeText("a", "utf-16le-no-bom")]).toEqual([0x61, 0x00]);
    expect([...encodeText("a", "utf-16be-no-bom")]).toEqual([0x00, 0x61]);
    expect([...encodeText("a😀", "utf-32le")]).toEqual([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0, 0x00, 0xf6, 0x01, 0x00]);
    expect([...encodeText("a😀", "utf-32be")]).toEqual([0, 0, 0xfe, 0xff, 0, 0, 0, 0x61, 0x00, 0x01, 0xf6, 0x00]);
    // A lone surrogate has no UTF-32 form: written as U+FFFD, as Buffer writes it in UTF-8.
    expect([...encodeText("a\ud800", "utf-32le")]).toEqual([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0, 0xfd, 0xff, 0, 0]);
  });

  it.each([
    ["a NUL byte", Buffer.from([0x61, 0x00, 0x62]), "binary"],
    ["invalid UTF-8", Buffer.from([0x61, 0xff, 0x62]), "not_round_trippable"],
    ["an odd-length UTF-16 body", Buffer.from([0xff, 0xfe, 0x61, 0x00, 0x62]), "not_round_trippable"],
    ["a lone UTF-16 surrogate", Buffer.from([0xff, 0xfe, 0x00, 0xd8, 0x61, 0x00]), "not_round_trippable"],
    ["a UTF-16 BOM with a NUL unit", Buffer.from([0xff, 0xfe, 0x61, 0x00, 0x00, 0x00]), "binary"],
    [
      "UTF-32 LE above U+10FFFF",
      Buffer.from([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0, 0x00, 0x00, 0x11, 0x00]),
      "not_round_trippable",
    ],
    [
      "UTF-32 BE above U+10FFFF",
      Buffer.from([0, 0, 0xfe, 0xff, 0, 0, 0, 0x61, 0xff, 0xff, 0xff, 0xff]),
      "not_round_trippable",
    ],
    [
      "a UTF-32 surrogate code point",
      Buffer.from([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0, 0x00, 0xd8, 0, 0]),
      "not_round_trippable",
    ],
    [
      "a UTF-32 body with a partial unit",
      Buffer.from([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0, 0x62, 0]),
      "not_round_trippable",
    ],
    ["UTF-32 holding U+0000", Buffer.from([0, 0, 0xfe, 0xff, 0, 0, 0, 0x61, 0, 0, 0, 0]), "binary"],
    ["Latin-1 text", Buffer.from("café\n", "latin1"), "not_round_trippable"],
    ["an overlong UTF-8 encoding", Buffer.from([0xc0, 0xaf]), "not_round_trippable"],
    ["a UTF-8 encoded surrogate", Buffer.from([0x61, 0xed, 0xa0, 0x80]), "not_round_trippable"],
    ["UTF-8 above U+10FFFF", Buffer.from([0xf4, 0x90, 0x80, 0x80]), "not_round_trippable"],
    ["a UTF-8 sequence cut short at the end", Buffer.from([0x61, 0xe2, 0x82]), "not_round_trippable"],
  ])("refuses %s", (_name, bytes, reason) => {
    expect(decodeExact(bytes)).toEqual({ ok: false, reason });
  });

  it("keeps a second BOM inside the text instead of swallowing it", () => {
    const bytes = Buffer.from([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x61]);
    const outcome = decodeExact(bytes);
    expect(outcome.ok && outcome.decoded.text).toBe("\ufeffa");
  });

  it.each([
    ["a\nb\n", "lf"],
    ["a\r\nb\r\n", "crlf"],
    ["a\rb\r", "cr"],
    ["a\r\nb\nc\r\n", "mixed"],
    ["abc", "none"],
  ])("detects the newline style of %j as %s", (text, style) => {
    expect(detectNewlines(text).style).toBe(style);
  });

  it("converts every newline kind", () => {
    expect(convertNewlines("a\nb\r\nc\rd", "\r\n")).toBe("a\r\nb\r\nc\r\nd");
  });

  it.each([
    ["binary", Buffer.from([0x61, 0x00]), "binary_file"],
    ["not UTF-8", Buffer.from([0x61, 0xff]), "unsupported_encoding"],
    ["UTF-32 above U+10FFFF", Buffer.from([0x00, 0x00, 0xfe, 0xff, 0x00, 0x11, 0x00, 0x00]), "unsupported_encoding"],
  ])("decodeForEdit refuses a %s file with a code and no retry", (_name, bytes, code) => {
    expect(() => decodeForEdit(bytes, "f.txt")).toThrow(expect.objectContaining({ code, retryable: false }));
  });
});
