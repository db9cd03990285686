import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../server/config.js";
import { MIN_OPERATOR_TOKEN_BITS, operatorTokenWeakness } from "../../../server/config-checks.js";

describe("operator token strength", () => {
  it.each([
    ["openssl rand -base64 32", randomBytes(32).toString("base64")],
    ["openssl rand -hex 16 (exactly 128 bits)", randomBytes(16).toString("hex")],
    ["22 base64url characters (132 bits)", randomBytes(17).toString("base64url").slice(0, 22)],
    ["a generated token (32 bytes base64url)", randomBytes(32).toString("base64url")],
    ["39 decimal digits", "718281828459045235360287471352662497757"],
    ["20 printable characters with punctuation", "k#9!Qz@2^fW*8(pL)m&3"],
    ["the test suite's token", "test-operator-token-0123456789"],
  ])("accepts %s", (_label, token) => {
    expect(operatorTokenWeakness(token)).toBeUndefined();
  });

  it.each([
    ["16 base64url characters (96 bits)", "abcdefghijkLMNOP", /about 96 bits .*at least 128 .*22 or more/],
    ["31 hex digits", "0123456789abcdef0123456789abcde", /about 124 bits .*32 or more hex/],
    ["38 decimal digits", "71828182845904523536028747135266249775", /38 decimal digits/],
    ["a long repetition", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /distinct/],
    ["a space inside", "a token with spaces in it that is long", /printable ASCII without spaces/],
  ])("refuses %s, saying why and how to make one", (_label, token, why) => {
    const weakness = operatorTokenWeakness(token);
    expect(weakness).toMatch(why);
    expect(weakness).toContain("openssl rand -base64 32");
  });

  it(`refuses a configured token under ${MIN_OPERATOR_TOKEN_BITS} bits at start, without echoing it`, () => {
    const load = () => loadConfig({ URLBRIDGE_OPERATOR_TOKEN: "short-but-printable" });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/URLBRIDGE_OPERATOR_TOKEN: too weak: .*128.*openssl rand -base64 32/);
    expect(load).not.toThrow(/short-but-printable/);
  });
});
