// Runs the portable engine's regex matching on a worker thread. A JavaScript regex can backtrack for
// minutes on a hostile line ("(a+)+$"); on the main thread that would stall every session of the bridge.
// Off it, a search that overruns its deadline is cut short by terminating the worker.
import { Worker } from "node:worker_threads";

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
  id: number;
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
  private worker: Worker | undefined;
  private nextId = 0;

  /** Matches each text; resolves "timeout" when the deadline passes first (the worker is then replaced). */
  match(source: string, flags: string, texts: string[], deadline: number, signal: AbortSignal): Promise<MatchBatchResult> {
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise((resolve) => {
      const finish = (result: MatchBatchResult) => {
        clearTimeout(timer);
        worker.off("message", onMessage);
        worker.off("error", onError);
        signal.removeEventListener("abort", onAbort);
        resolve(result);
      };
      const kill = (result: MatchBatchResult) => {
        if (this.worker === worker) this.worker = undefined;
        void worker.terminate();
        finish(result);
      };
      const onMessage = (message: { id: number; results: Array<Array<[number, number]>> }) => {
        if (message.id === id) finish(message.results);
      };
      const onAbort = () => kill("aborted");
      const onError = () => kill("aborted");
      const timer = setTimeout(() => kill("timeout"), Math.max(0, deadline - Date.now()));
      worker.on("message", onMessage);
      worker.once("error", onError);
      signal.addEventListener("abort", onAbort, { once: true });
      worker.postMessage({ id, source, flags, texts } satisfies Job);
    });
  }

  private start(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    // An idle worker must not keep the process alive.
    worker.unref();
    worker.on("error", () => {
      if (this.worker === worker) this.worker = undefined;
    });
    return worker;
  }

  close(): void {
    void this.worker?.terminate();
    this.worker = undefined;
  }
}
