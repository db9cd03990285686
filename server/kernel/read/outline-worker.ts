// The outline worker's program (a worker thread, started by outline.ts through kernel/worker/deadline-worker.ts):
// parsing a 2 MiB file takes the TypeScript compiler ~0.3 s and tree-sitter ~0.6 s, and loading the compiler ~1 s,
// all of which on the main thread would stall every session of the bridge. Answers each `{ id, ...job }` with
// `{ id, outline }` or `{ id, error }`, one job at a time.
import { parentPort } from "node:worker_threads";
import { lowerThreadPriority } from "../worker/background-priority.js";
import { parseOutline, type OutlineJob } from "./outline-parse.js";

lowerThreadPriority();
const port = parentPort!;
let queue = Promise.resolve();
port.on("message", (message: { id: number } & OutlineJob) => {
  queue = queue.then(async () => {
    try {
      port.postMessage({ id: message.id, outline: await parseOutline(message) });
    } catch (error) {
      port.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) });
    }
  });
});
