// The transport decisions the gym forced, pinned from both sides: the reference encoder's rules, layered
// percent decoding (and what it costs a client that percent-encodes a literal %), encoded BOMs, and which
// & counts as a parameter.
import { describe, expect, it } from "vitest";
import { encodeQueryValue, encodeUrlText } from "../../server/url-grammar/encode.js";
import { decodePercentLayers, decodeQueryComponent, MAX_PERCENT_LAYERS } from "../../server/url-grammar/percent.js";
import { parseQuery } from "../../server/url-grammar/query.js";
import { bindWriteLike } from "./server-view.js";

const encodeLayers = (text: string, layers: number) => {
  let out = text;
  for (let i = 0; i < layers; i++) out = out.replace(/%/g, "%25");
  return out;
};

describe("reference encoder rules (docs/TRANSPORT_GYM.md)", () => {
  it.each([
    ["~", "~~"],
    ["\n\r\t", "~n~r~t"],
    ["#%+&", "~h~p~q~a"],
    ["a b", "a~sb"],
    ["Az09-._!$'()*,;=:@/?", "Az09-._!$'()*,;=:@/?"],
    ['"<>\\^`{|}[]', "%22%3C%3E%5C%5E%60%7B%7C%7D%5B%5D"],
    ["\u0000\u001f\u007f", "~u0000~u001F~u007F"],
    ["\u00e9\u20ac\uffff", "~u00E9~u20AC~uFFFF"],
    ["\u{1F600}\u{10FFFF}", "~u{1F600}~u{10FFFF}"],
    ["a\ud800b\udc00", "a~uFFFDb~uFFFD"],
  ])("writes %j as %s", (text, encoded) => {
    expect(encodeUrlText(text)).toBe(encoded);
  });

  it("encodes = in values before raw= only", () => {
    expect(encodeQueryValue("a=b")).toBe("a%3Db");
    expect(encodeUrlText("a=b")).toBe("a=b");
  });
});

describe("double encoding", () => {
  it.each([1, 2, 3])("undoes %i extra layer(s) a proxy added over an encoded space, quote and é", (layers) => {
    const wire = encodeLayers("a%20b%22c%C3%A9", layers);
    expect(parseQuery(`raw=${wire}`).raw?.text).toBe('a b"cé');
  });

  it(`stops after ${MAX_PERCENT_LAYERS} layers rather than decoding without bound`, () => {
    expect(decodePercentLayers(encodeLayers("%41", MAX_PERCENT_LAYERS - 1))).toBe("A");
    expect(decodePercentLayers(encodeLayers("%41", MAX_PERCENT_LAYERS))).toBe("%41");
  });

  it("keeps a literal % written as ~p, whatever the layers: ~p20 is always the text %20", () => {
    for (const wire of ["~p20", "%7Ep20", "%257Ep20", "%25257Ep20"])
      expect(parseQuery(`raw=${wire}`).raw?.text).toBe("%20");
  });

  it("keeps a percent-encoded literal % that is not followed by two hex digits", () => {
    expect(decodeQueryComponent("100%25")).toBe("100%");
    expect(decodeQueryComponent("%25zz")).toBe("%zz");
    expect(decodeQueryComponent("50%25%20off")).toBe("50% off");
    expect(decodeQueryComponent("%25")).toBe("%");
  });

  it("keeps the literal %XX of text a standard encoder encoded once: what one decode left is text, not an encoding", () => {
    // Once decoded, the target holds a raw space (or quote, control, non-ASCII) or an escaped unreserved
    // character (%2d): no encoder writes either, so its remaining %XX are content (docs/TRANSPORT_GYM.md).
    expect(parseQuery(`raw=${encodeURIComponent("%20 and %02d")}`).raw?.text).toBe("%20 and %02d");
    expect(parseQuery(`raw=${encodeURIComponent('printf("%02x %20s")')}`).raw?.text).toBe('printf("%02x %20s")');
    expect(parseQuery(`raw=${encodeURIComponent("%02d:%2d")}`).raw?.text).toBe("%02d:%2d");
    expect(parseQuery("raw=~p20~sand~s~p02d").raw?.text).toBe("%20 and %02d");
  });

  it("takes the evidence from the whole target: a value that proves one layer keeps the other values' %XX too", () => {
    const q = parseQuery(`old=${encodeURIComponent("%20")}&new=${encodeURIComponent("a b")}`);
    expect(q.segments.map((s) => s.value)).toEqual(["%20", "a b"]);
  });

  it("still costs a client that percent-encodes text made only of escapes: %2520 alone is a proxy's double space (use ~p)", () => {
    // encodeURIComponent("%20") === "%2520", byte for byte what a proxy double-encoding " " sends.
    expect(parseQuery(`raw=${encodeURIComponent("%20")}`).raw?.text).toBe(" ");
    expect(parseQuery(`raw=${encodeURIComponent("%20")}`).plan).toMatchObject({ layers: 2 });
  });

  it("reads + as a plus in a target that carries its spaces as %20, and as a space otherwise", () => {
    expect(parseQuery("raw=\\w+\\(%20x").raw?.text).toBe("\\w+\\( x");
    expect(parseQuery("raw=a+b%2520c").raw?.text).toBe("a+b c");
    expect(parseQuery("raw=a+b").raw?.text).toBe("a b");
    expect(parseQuery("raw=a+b%2Bc").raw?.text).toBe("a b+c");
  });

  it("treats a + as a space only on the wire, never one that a decoding layer produced", () => {
    expect(decodeQueryComponent("a+b%2Bc%252Bd")).toBe("a b+c+d");
  });
});

describe("encoded byte order marks", () => {
  it.each([
    ["%EF%BB%BFx", "\ufeffx"],
    ["a%EF%BB%BFb", "a\ufeffb"],
    ["%EF%BB%BF%EF%BB%BF", "\ufeff\ufeff"],
    ["%25EF%25BB%25BF", "\ufeff"],
  ])("keeps the U+FEFF in %s (TextDecoder drops a leading BOM unless told not to)", (wire, text) => {
    expect(parseQuery(`raw=${wire}`).raw?.text).toBe(text);
  });
});

describe("misplaced parameters after raw=", () => {
  const target = (tail: string) => `/v0/AAAAAAAA/w?path=a.txt&raw=${tail}`;

  it.each([
    ["x&wait=1000", "wait"],
    // "x&path=b" with path= given before raw= is content (test/integration/gateway/repairs-followed.test.ts).
    ["x&w%61it=1000", "wait"],
    ["x&raw=y", "raw"],
  ])("refuses the literal & in %s as a misplaced %s, with a repair URL that moves it", (tail, name) => {
    const bound = bindWriteLike(target(tail));
    expect(bound.ok).toBe(false);
    if (bound.ok) return;
    expect(bound.error.code).toBe("misplaced_parameter");
    expect(bound.error.detail).toEqual({ parameter: name });
    expect(bound.error.repair).toMatch(/\?path=a\.txt&.+=.*&raw=x$/);
  });

  it.each([
    ["x~await=1000", "x&wait=1000"],
    ["x%26wait%3D1000", "x&wait=1000"],
    ["x%26wait=1000", "x&wait=1000"],
    ["x%2526wait=1000", "x&wait=1000"],
    ["a && b&&c", "a && b&&c"],
    ["x&unknown=1", "x&unknown=1"],
    ["x&=1&1a=2", "x&=1&1a=2"],
  ])("takes %s as content: the & was escaped, or names no parameter", (tail, text) => {
    const bound = bindWriteLike(target(tail));
    expect(bound.ok && bound.args.content).toBe(text);
  });
});
