// scripts/bench/harness.ts sampleAsClient, the way every anchor suite times its calls (issue 34): one call at a time,
// every function once a round, the warm-up untimed, and each round's turns in a seeded order that changes from round
// to round but is the same on every run, so no function always follows the same one.
import { describe, expect, it } from "vitest";
import { sampleAsClient } from "../../../scripts/bench/harness.js";

const FUNCTIONS = 4;
const RUNS = 12;
const WARMUP = 3;
/** No pause: what is checked here is the order and the counts, never time. */
const NO_GAP = 0;

/** Runs sampleAsClient over FUNCTIONS recording functions; the calls in order, and the most in flight at once. */
async function recordTurns(): Promise<{ calls: number[]; samples: number[][]; mostInFlight: number }> {
  const calls: number[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const fns = Array.from({ length: FUNCTIONS }, (_, k) => async () => {
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    calls.push(k);
    await new Promise((resolve) => setImmediate(resolve));
    inFlight--;
  });
  const samples = await sampleAsClient(RUNS, WARMUP, fns, NO_GAP);
  return { calls, samples, mostInFlight };
}

function roundsOf(calls: number[]): number[][] {
  return Array.from({ length: calls.length / FUNCTIONS }, (_, r) => calls.slice(r * FUNCTIONS, (r + 1) * FUNCTIONS));
}

describe("sampleAsClient", () => {
  it("calls one function at a time, each once a round, and times only the rounds after the warm-up", async () => {
    const { calls, samples, mostInFlight } = await recordTurns();
    expect(mostInFlight).toBe(1);
    expect(calls).toHaveLength((RUNS + WARMUP) * FUNCTIONS);
    for (const round of roundsOf(calls)) expect([...round].sort()).toEqual([0, 1, 2, 3]);
    expect(samples.map((s) => s.length)).toEqual(Array.from({ length: FUNCTIONS }, () => RUNS));
  });

  it("takes the turns in an order that changes between rounds and is the same on every run", async () => {
    const first = await recordTurns();
    const second = await recordTurns();
    expect(second.calls).toEqual(first.calls);
    const orders = new Set(roundsOf(first.calls).map((round) => round.join(",")));
    expect(orders.size).toBeGreaterThan(1);
    // Every function is preceded by some other function than the one a fixed order would put before it.
    const predecessors = Array.from({ length: FUNCTIONS }, () => new Set<number>());
    for (let i = 1; i < first.calls.length; i++) predecessors[first.calls[i]!]!.add(first.calls[i - 1]!);
    for (const seen of predecessors) expect(seen.size).toBeGreaterThan(1);
  });
});
