import { describe, expect, it } from "vitest";
import { CAPABILITY_TOKEN_LENGTH, generateCapabilityToken } from "../../../server/control/capability-token.js";

describe("generateCapabilityToken", () => {
  it("makes 8 base62 characters", () => {
    for (let i = 0; i < 1000; i++) expect(generateCapabilityToken()).toMatch(/^[A-Za-z0-9]{8}$/);
    expect(CAPABILITY_TOKEN_LENGTH).toBe(8);
  });

  it("uses the whole alphabet without an obvious bias", () => {
    const counts = new Map<string, number>();
    const samples = 20_000;
    for (let i = 0; i < samples; i++)
      for (const ch of generateCapabilityToken()) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (samples * 8) / 62;
    // Modulo bias from using all 256 byte values would put the first 8 symbols ~3% high; allow sampling noise only.
    for (const n of counts.values()) expect(Math.abs(n - expected) / expected).toBeLessThan(0.12);
    const chi = [...counts.values()].reduce((s, n) => s + (n - expected) ** 2 / expected, 0);
    expect(chi).toBeLessThan(120); // 61 degrees of freedom: p < 1e-5 above ~115
  });
});
