// The in-suite gym: a few hundred seeded cases end to end through every intermediary, with real readers,
// checked byte for byte on disk or in the answer. The large matrix is `npm run gym:transport:audit`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CASE_KINDS } from "./cases.js";
import { gymSeed } from "./fuzz.js";
import { startGym, type Gym } from "./harness.js";
import { INTERMEDIARIES } from "./matrix.js";
import { planCases } from "./plan.js";
import { availableReaders } from "./readers.js";
import { runPlan, type GymReport } from "./report.js";

const CASES = 260;
const CONCURRENCY = 4;
const seed = gymSeed();
const readers = availableReaders();

describe(`transport gym end to end (${CASES} cases, GYM_SEED=${seed})`, () => {
  let gym: Gym;
  let report: GymReport;

  beforeAll(async () => {
    gym = await startGym({ intermediaries: INTERMEDIARIES, readers });
    const specs = planCases({ seed, cases: CASES, kinds: gym.kinds, intermediaries: INTERMEDIARIES, readers });
    ({ report } = await runPlan(gym, specs, { seed, concurrency: CONCURRENCY }));
  }, 240_000);
  afterAll(async () => gym?.close());

  it("serves every route the gym exercises", () => {
    expect(gym.missingKinds).toEqual([]);
    expect(Object.keys(report.byKind).sort()).toEqual(CASE_KINDS.map((k) => k.name).sort());
  });

  it("delivers exactly the meant bytes in every case, or refuses where the contract allows", () => {
    expect(report.failureSamples).toEqual([]);
    expect(report.failures).toBe(0);
    expect(report.cases).toBe(CASES);
  });

  it("never executes a mutation twice, whatever the intermediary repeats", () => {
    expect(report.mutationCases).toBeGreaterThan(CASES / 3);
    expect(report.doubleExecutions).toBe(0);
  });

  it("puts every intermediary and every reader in the loop", () => {
    for (const via of INTERMEDIARIES) expect(report.byIntermediary[via.name]?.cases ?? 0, via.name).toBeGreaterThan(0);
    for (const reader of readers) expect(report.byReader[reader]?.cases ?? 0, reader).toBeGreaterThan(0);
  });

  it("really recovered truncated answers through /z parts", () => {
    expect(report.recoveredByRange).toBeGreaterThan(0);
  });
});
