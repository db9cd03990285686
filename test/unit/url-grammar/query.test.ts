import { describe, expect, it } from "vitest";
import { parseQuery } from "../../../server/url-grammar/query.js";

describe("parseQuery", () => {
  it("takes everything after the first raw= as content, including & and =", () => {
    const q = parseQuery("path=a.txt&wait=10&raw=x=1&y=2?z#w");
    expect(q.segments.map((s) => [s.key, s.value])).toEqual([
      ["path", "a.txt"],
      ["wait", "10"],
    ]);
    expect(q.raw?.rawText).toBe("x=1&y=2?z#w");
    expect(q.raw?.text).toBe("x=1&y=2?z#w");
  });

  it.each([
    ["raw=a+b", "a b"],
    ["raw=a%20b", "a b"],
    ["raw=a~sb", "a b"],
    ["raw=1~q1", "1+1"],
    ["raw=%7En", "\n"],
    ["raw=~~n", "~n"],
    ["raw=50~p", "50%"],
    ["raw=100%", "100%"],
    ["raw=%zz", "%zz"],
    ["raw=", ""],
    ["raw", ""],
    ["raw=a&&b", "a&&b"],
    ["raw=print(%22hi%22)~n", 'print("hi")\n'],
  ])("decodes the raw tail of %j", (query, expected) => {
    expect(parseQuery(query).raw?.text).toBe(expected);
  });

  it("applies the ~ grammar to ordinary parameter values", () => {
    const q = parseQuery("path=my~sdir/a~hb.txt&include=*.ts");
    expect(q.segments[0]!.value).toBe("my dir/a#b.txt");
    expect(q.segments[1]!.value).toBe("*.ts");
  });

  it("keeps the received spelling of each parameter", () => {
    const q = parseQuery("p%61th=a%2Fb&x");
    expect(q.segments[0]).toMatchObject({ rawKey: "p%61th", key: "path", rawValue: "a%2Fb", value: "a/b" });
    expect(q.segments[1]).toMatchObject({ rawKey: "x", key: "x", rawValue: undefined, value: "" });
  });

  it("recognises an encoded raw key", () => {
    expect(parseQuery("r%61w=a&b").raw?.text).toBe("a&b");
  });

  it("has no raw tail when raw= is absent", () => {
    expect(parseQuery("a=1&b=2").raw).toBeUndefined();
  });
});
