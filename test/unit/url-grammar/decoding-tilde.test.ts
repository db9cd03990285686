// The tilde reading of a target, decided from a declaration or from evidence (docs/TRANSPORT_GYM.md,
// "Tilde from evidence"): the decision table row by row, through the real query parser.
import { describe, expect, it } from "vitest";
import { parseQuery } from "../../../server/url-grammar/query.js";

const read = (query: string) => {
  const q = parseQuery(query);
  return { text: q.raw?.text, reading: q.plan.tilde, basis: q.tildeBasis };
};

describe("the tilde reading", () => {
  it.each([
    // an encoded newline, CR, tab, #, % or &: only a percent-encoder writes these, so ~ is literal
    [
      "raw=mask%20%3D%20~np.isnan(x)%0Aflag%20%3D%20~~value",
      "mask = ~np.isnan(x)\nflag = ~~value",
      "literal",
      "evidence",
    ],
    ["raw=~~strike~~%0D%0A", "~~strike~~\r\n", "literal", "evidence"],
    ["raw=~n%09x", "~n\tx", "literal", "evidence"],
    ["raw=%23%20~n", "# ~n", "literal", "evidence"],
    ["raw=100%25%20~n", "100% ~n", "literal", "evidence"],
    ["raw=a%26%26~n", "a&&~n", "literal", "evidence"],
    ["path=a%0Ab&raw=~n", "~n", "literal", "evidence"],
    // ... unless the grammar's own spelling (spaces only as ~s, a ~u escape) says otherwise: undecided
    ["raw=sleep~s0.3~s%26%26~secho~sslept", "sleep 0.3 && echo slept", "escapes", "undecided"],
    ["raw=caf~u00E9%0A", "café\n", "escapes", "undecided"],
    ["raw=a%20~sb%0A", "a ~sb\n", "literal", "evidence"],
    // a proxy's extra layer is undone before the evidence is read
    ["raw=~np%250A", "~np\n", "literal", "evidence"],
    // a raw character no encoder leaves raw, spaces only as ~s, or a ~u escape: the ~ grammar
    ["raw=x=1~ny=2", "x=1\ny=2", "escapes", "evidence"],
    ["raw=a:~n", "a:\n", "escapes", "evidence"],
    ["raw=hello~sworld", "hello world", "escapes", "evidence"],
    ["raw=caf~u00E9", "café", "escapes", "evidence"],
    ["raw=0~q", "0+", "escapes", "evidence"],
    ["raw=C~h~n", "C#\n", "escapes", "evidence"],
    ["raw=a%2Bb~q~n", "a+b+\n", "escapes", "undecided"],
    ["raw=100%~n", "100%\n", "escapes", "evidence"],
    // an escaped reserved character beside a raw ~, or %7E beside + spaces: leans literal, with a notice
    ["raw=mask%20%3D%20~np.isnan(x)", "mask = ~np.isnan(x)", "literal", "weak"],
    ["raw=mask+%3D+%7Enp.isnan%28x%29", "mask = ~np.isnan(x)", "literal", "weak"],
    ["raw=a%2C~~b", "a,~~b", "literal", "weak"],
    // nothing says, or both: the ~ grammar, with a notice
    ["raw=~~x~~", "~x~", "escapes", "undecided"],
    ["raw=hello~nworld", "hello\nworld", "escapes", "undecided"],
    ["raw=see%20~np", "see \np", "escapes", "undecided"],
    ["raw=%7E%7Ex%7E%7E", "~x~", "escapes", "undecided"],
    ["raw=a=%3A~n", "a=:\n", "escapes", "undecided"],
    // a WHATWG reader (fetch, Chromium) escapes a typed ' in a query: %27 says nothing about an encoder
    ["raw=%27~~x", "'~x", "escapes", "undecided"],
    // no ~ escape anywhere: both readings agree
    ["raw=a%20b", "a b", "escapes", "inactive"],
    ["raw=~/bin~1", "~/bin~1", "escapes", "inactive"],
  ])("reads %j as %j (%s, %s)", (query, text, reading, basis) => {
    expect(read(query)).toEqual({ text, reading, basis });
  });

  it("does not count a %3D before raw= as an encoder's: the reference encoder writes = that way in values", () => {
    const q = parseQuery("old=a%3Db~nc&raw=x");
    expect(q.segments[0]!.value).toBe("a=b\nc");
    expect(q.tildeBasis).toBe("undecided");
  });

  it.each([
    ["enc=pct&raw=hello~nworld", "hello~nworld", "literal"],
    ["enc=percent&raw=a%0A~n", "a\n~n", "literal"],
    ["enc=tilde&raw=a%0A~n", "a\n\n", "escapes"],
    ["enc=TILDE&raw=mask%20%3D%20~np", "mask = \np", "escapes"],
  ])("a declaration removes all doubt: %j", (query, text, reading) => {
    const q = parseQuery(query);
    expect(q.raw?.text).toBe(text);
    expect(q.plan.tilde).toBe(reading);
    expect(q.tildeBasis).toBe("declared");
    expect(q.segments.map((s) => s.key)).toEqual([]);
  });

  it("applies the reading to values before raw= too", () => {
    expect(parseQuery("old=~np%0A&raw=x").segments[0]!.value).toBe("~np\n");
    expect(parseQuery("enc=pct&old=~np&raw=x").segments.map((s) => s.value)).toEqual(["~np"]);
  });

  it("keeps a declaration that names nothing, for the gateway to refuse", () => {
    expect(parseQuery("enc=yes&raw=~n").declaration).toMatchObject({ value: "yes", reading: undefined });
  });
});
