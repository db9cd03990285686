// Runs a TypeScript worker module from source (worker-entry.ts): registers tsx in this thread, then imports it.
// Only runs from a checkout with dev dependencies; the built server starts its workers' .js directly.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.entry);
