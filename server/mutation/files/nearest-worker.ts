// The nearest-lines worker's program (a worker thread, started by nearest-search.ts through
// kernel/worker/deadline-worker.ts): a stale /e's search for the lines most like old reads the whole file line
// by line, which on a 10 MB file took the event loop ~4 s and on a 100 MB one ran the bridge out of heap. Here it
// holds no session up, and its heap is capped. Answers each `{ id, ...job }` with `{ id, search }` or `{ id, error }`.
import { parentPort } from "node:worker_threads";
import { lowerThreadPriority } from "../../kernel/worker/background-priority.js";
import { searchNearest } from "./nearest-lines.js";
import type { NearestJob } from "./nearest-search.js";

lowerThreadPriority();
const port = parentPort!;
port.on("message", (message: { id: number } & NearestJob) => {
  try {
    const search = searchNearest(message.text, message.old, {
      maxComparisons: message.maxComparisons,
      deadline: performance.now() + message.budgetMs,
    });
    port.postMessage({ id: message.id, search });
  } catch (error) {
    port.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) });
  }
});
