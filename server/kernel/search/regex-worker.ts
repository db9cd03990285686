// Runs the portable engine's regex matching on a worker thread. A JavaScript regex can backtrack for
// minutes on a hostile line ("(a+)+$"); on the main thread that would stall every session of the bridge.
// Off it, a search that overruns its deadline is cut short by terminating the worker.
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

interface Job {
  source: string;
  flags: string;
  texts: string[];
}

const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const findMatchingLines = ${findMatchingLines.toString()};
parentPort.on("message", (job) => {
  parentPort.postMessage({ id: job.id, results: job.texts.map((text) => findMatchingLines(text, job.source, job.flags)) });
});
`;

export type MatchBatchResult = Array<Array<[number, number]>> | "timeout" | "aborted";

/** One lazily started worker per bridge; replaced after it is terminated for overrunning a deadline. */
export class RegexWorker {
  private readonly worker = new DeadlineWorker<Job, { results: Array<Array<[number, number]>> }>(() => WORKER_SOURCE);

  /** Matches each text; resolves "timeout" when the deadline passes first (the worker is then replaced). */
  async match(
    source: string,
    flags: string,
    texts: string[],
    deadline: number,
    signal: AbortSignal,
  ): Promise<MatchBatchResult> {
    const outcome = await this.worker.run({ source, flags, texts }, deadline, signal);
    if ("reply" in outcome) return outcome.reply.results;
    return outcome.failed === "timeout" ? "timeout" : "aborted";
  }

  close(): void {
    this.worker.close();
  }
}
