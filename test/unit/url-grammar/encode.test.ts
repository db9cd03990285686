import { describe, expect, it } from "vitest";
import { encodeQueryValue, encodeUrlText } from "../../../server/url-grammar/encode.js";
import { parseQuery } from "../../../server/url-grammar/query.js";

const samples = [
  "plain",
  "a b+c&d=e#f%g~h",
  "line1\nline2\r\n\ttab",
  "~n literal ~~ ~u2082",
  "é 😀 \u0301 \u{10FFFF}",
  "C:\\Users\\x\\file.txt",
  "&wait=1000&path=x",
  "%20 %zz 100%",
  'echo "$HOME" | grep -E "^a.*(b|c)+$" > /dev/null',
  "",
];

describe("encodeUrlText", () => {
  it.each(samples)("round-trips %j through the raw tail", (text) => {
    const encoded = encodeUrlText(text);
    expect(encoded).toMatch(/^[\x21-\x7e]*$/);
    expect(parseQuery(`raw=${encoded}`).raw?.text).toBe(text);
  });

  it.each(samples)("round-trips %j as a parameter value", (text) => {
    expect(parseQuery(`a=${encodeQueryValue(text)}&b=1`).segments[0]!.value).toBe(text);
  });
});
