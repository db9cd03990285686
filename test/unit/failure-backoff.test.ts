import { describe, expect, it } from "vitest";
import { createFailureBackoff } from "../../server/failure-backoff.js";

const options = { freeFailures: 2, baseDelayMs: 10, maxDelayMs: 40, windowMs: 60_000, maxHeld: 2, maxSources: 3 };

describe("failure backoff", () => {
  it("answers the free failures at once, then doubles the hold up to the cap", () => {
    const backoff = createFailureBackoff(options);
    expect([1, 2, 3, 4, 5, 6, 50].map((n) => backoff.delayFor(n))).toEqual([0, 0, 10, 20, 40, 40, 40]);
  });

  it("counts failures per source inside the window only", async () => {
    let now = 0;
    const backoff = createFailureBackoff({ ...options, now: () => now });
    expect((await backoff.fail("a")).failures).toBe(1);
    expect((await backoff.fail("a")).failures).toBe(2);
    expect((await backoff.fail("b")).failures).toBe(1);
    now = 60_001;
    expect(await backoff.fail("a")).toEqual({ failures: 1, heldMs: 0, saturated: false });
  });

  it("holds at most maxHeld answers at once and answers the rest at once, marked saturated", async () => {
    const backoff = createFailureBackoff(options);
    for (let i = 0; i < options.freeFailures; i++) await backoff.fail("a");
    const verdicts = Promise.all([backoff.fail("a"), backoff.fail("a"), backoff.fail("a"), backoff.fail("a")]);
    expect(backoff.held()).toBe(2);
    const settled = await verdicts;
    expect(settled.map((v) => v.saturated)).toEqual([false, false, true, true]);
    expect(settled.map((v) => v.heldMs)).toEqual([10, 20, 0, 0]);
    expect(backoff.held()).toBe(0);
  });

  it("forgets the least recently failing source beyond maxSources", async () => {
    const backoff = createFailureBackoff(options);
    for (const s of ["a", "a", "b", "c", "d"]) await backoff.fail(s);
    // "a" was forgotten when "d" arrived: its count starts over.
    expect((await backoff.fail("a")).failures).toBe(1);
  });
});
