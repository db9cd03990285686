// npm run gym:transport:audit — the large hostile-intermediary audit. GYM_SEED and GYM_CASES choose the
// run, GYM_CONCURRENCY the worker count, GYM_ONLY=c12,c345 reruns single cases; the last line is the report.
import { gymSeed } from "./fuzz.js";
import { startGym } from "./harness.js";
import { INTERMEDIARIES } from "./matrix.js";
import { planCases } from "./plan.js";
import { availableReaders } from "./readers.js";
import { runPlan } from "./report.js";

const DEFAULT_CASES = 2000;
const DEFAULT_CONCURRENCY = 4;

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

const seed = gymSeed();
const cases = positiveInt("GYM_CASES", DEFAULT_CASES);
const concurrency = positiveInt("GYM_CONCURRENCY", DEFAULT_CONCURRENCY);
const readers = availableReaders();

const gym = await startGym({ intermediaries: INTERMEDIARIES, readers });
try {
  const only = new Set((process.env.GYM_ONLY ?? "").split(",").filter(Boolean));
  const planned = planCases({ seed, cases, kinds: gym.kinds, intermediaries: INTERMEDIARIES, readers });
  const specs = only.size > 0 ? planned.filter((s) => only.has(s.id)) : planned;
  console.error(`gym audit: ${specs.length} cases, seed ${seed}, ${concurrency} workers, readers ${readers.join(" ")}`);
  if (gym.missingKinds.length > 0) console.error(`not yet served, so not run: ${gym.missingKinds.join("; ")}`);
  const { report } = await runPlan(gym, specs, {
    seed,
    concurrency,
    onProgress: (done, failures) => console.error(`  ${done}/${specs.length} cases, ${failures} failures`),
  });
  for (const sample of report.failureSamples) console.error(`FAIL ${JSON.stringify(sample)}`);
  console.log(JSON.stringify(report));
  process.exitCode = report.failures > 0 || report.doubleExecutions > 0 ? 1 : 0;
} finally {
  await gym.close();
}
