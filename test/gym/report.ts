// Runs a plan on a started gym with a small worker pool and folds the results into the report the audit
// prints: cases, failures, double executions, and counts by intermediary, reader, form and kind.
import { CORPUS_VERSION } from "./corpus.js";
import type { CaseResult, CaseSpec, Gym } from "./harness.js";

interface Tally {
  cases: number;
  failures: number;
  refused: number;
}

export interface GymReport {
  corpusVersion: string;
  seed: number;
  cases: number;
  passed: number;
  failures: number;
  doubleExecutions: number;
  /** Refusals allowed by the contract (sort-all moving a parameter after raw=): never wrong bytes. */
  refused: number;
  recoveredByRange: number;
  mutationCases: number;
  byIntermediary: Record<string, Tally>;
  byReader: Record<string, Tally>;
  byForm: Record<string, Tally>;
  byKind: Record<string, Tally>;
  missingKinds: string[];
  durationMs: number;
  /** The first failures, for a human; the full list is in `results`. */
  failureSamples: Array<Pick<CaseResult, "id" | "kind" | "source" | "form" | "reader" | "intermediary" | "detail">>;
}

const MAX_SAMPLES = 12;

function tally(into: Record<string, Tally>, key: string, result: CaseResult): void {
  const t = (into[key] ??= { cases: 0, failures: 0, refused: 0 });
  t.cases += 1;
  if (!result.passed) t.failures += 1;
  if (result.outcome === "refused") t.refused += 1;
}

export async function runPlan(
  gym: Gym,
  specs: readonly CaseSpec[],
  options: { seed: number; concurrency: number; onProgress?: (done: number, failures: number) => void },
): Promise<{ report: GymReport; results: CaseResult[] }> {
  const started = Date.now();
  const results: CaseResult[] = [];
  let next = 0;
  let failures = 0;
  const worker = async () => {
    while (next < specs.length) {
      const spec = specs[next++]!;
      const result = await gym.run(spec);
      results.push(result);
      if (!result.passed) failures += 1;
      if (results.length % 250 === 0) options.onProgress?.(results.length, failures);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));

  const executions = gym.executionsByCallId();
  const mutationResults = results.filter((r) => gym.kinds.find((k) => k.name === r.kind)?.mutation);
  const doubledCalls = [...executions.values()].filter((n) => n > 1).length;
  const doubledRuns = results.filter((r) => (r.executions ?? 0) > 1).length;
  const report: GymReport = {
    corpusVersion: CORPUS_VERSION,
    seed: options.seed,
    cases: results.length,
    passed: results.filter((r) => r.passed).length,
    failures,
    doubleExecutions: doubledCalls + doubledRuns,
    refused: results.filter((r) => r.outcome === "refused").length,
    recoveredByRange: results.filter((r) => r.recoveredByRange).length,
    mutationCases: mutationResults.length,
    byIntermediary: {},
    byReader: {},
    byForm: {},
    byKind: {},
    missingKinds: gym.missingKinds,
    durationMs: Date.now() - started,
    failureSamples: results
      .filter((r) => !r.passed)
      .slice(0, MAX_SAMPLES)
      .map(({ id, kind, source, form, reader, intermediary, detail }) => ({
        id,
        kind,
        source,
        form,
        reader,
        intermediary,
        detail,
      })),
  };
  for (const r of results) {
    tally(report.byIntermediary, r.intermediary, r);
    tally(report.byReader, r.reader, r);
    tally(report.byForm, r.form, r);
    tally(report.byKind, r.kind, r);
  }
  return { report, results };
}
