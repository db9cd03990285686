// Runs agents' regexes on a worker thread: the portable search engine's line matching, and the pattern= waits of a
// terminal's input (/i). A JavaScript regex can backtrack for minutes on a hostile line ("(a+)+$"); on the main
// thread that would stall every session of the bridge. Off it, a job that overruns its deadline is cut short by
// terminating the worker.
import { DeadlineWorker } from "../worker/deadline-worker.js";

/**
 * Line index (0-based) and UTF-16 offset of the first match of every matching line. Terminators (\n, \r\n)
 * are not part of a line. Self-contained on purpose: its source text is also the worker's program.
 */
export function findMatchingLines(text: string, source: string, flags: string): Array<[number, number]> {
  // With "m", ^ and $ also match around every line break, so a line match is always a whole-text match.
  if (!new RegExp(source, `${flags}m`).test(text)) return [];
  const line = new RegExp(source, flags);
  const out: Array<[number, number]> = [];
  const parts = text.split("\n");
  const count = text.endsWith("\n") ? parts.length - 1 : parts.length;
  for (let i = 0; i < count; i++) {
    let part = parts[i]!;
    if (i < parts.length - 1 && part.endsWith("\r")) part = part.slice(0, -1);
    const at = part.search(line);
    if (at !== -1) out.push([i, at]);
  }
  return out;
}

/** Whether the regex matches anywhere in the text. Self-contained on purpose, like findMatchingLines. */
export function matchesAnywhere(text: string, source: string, flags: string): boolean {
  return new RegExp(source, flags).test(text);
}

interface Job {
  /** lines: findMatchingLines for each text; test: matchesAnywhere for each text. */
  kind: "lines" | "test";
  source: string;
  flags: string;
  texts: string[];
}

const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const findMatchingLines = ${findMatchingLines.toString()};
const matchesAnywhere = ${matchesAnywhere.toString()};
parentPort.on("message", (job) => {
  const match = job.kind === "test" ? matchesAnywhere : findMatchingLines;
  parentPort.postMessage({ id: job.id, results: job.texts.map((text) => match(text, job.source, job.flags)) });
});
`;

export type MatchBatchResult = Array<Array<[number, number]>> | "timeout" | "aborted";
export type TestBatchResult = boolean[] | "timeout" | "aborted";

/** One lazily started worker per bridge; replaced after it is terminated for overrunning a deadline. */
export class RegexWorker {
  private readonly worker = new DeadlineWorker<Job, { results: Array<Array<[number, number]>> | boolean[] }>(
    () => WORKER_SOURCE,
  );

  /** Matches each text; resolves "timeout" when the deadline passes first (the worker is then replaced). */
  async match(
    source: string,
    flags: string,
    texts: string[],
    deadline: number,
    signal: AbortSignal,
  ): Promise<MatchBatchResult> {
    const outcome = await this.worker.run({ kind: "lines", source, flags, texts }, deadline, signal);
    if ("reply" in outcome) return outcome.reply.results as Array<Array<[number, number]>>;
    return outcome.failed === "timeout" ? "timeout" : "aborted";
  }

  /** Whether the regex matches anywhere in each text; "timeout" when the deadline passes first (as match). */
  async test(
    source: string,
    flags: string,
    texts: string[],
    deadline: number,
    signal: AbortSignal,
  ): Promise<TestBatchResult> {
    const outcome = await this.worker.run({ kind: "test", source, flags, texts }, deadline, signal);
    if ("reply" in outcome) return outcome.reply.results as boolean[];
    return outcome.failed === "timeout" ? "timeout" : "aborted";
  }

  close(): void {
    this.worker.close();
  }
}
