// DeadlineWorker's heap cap (resourceLimits), used by the nearest-lines search of a failed /e: a job that runs
// the worker out of its heap ends that worker alone, answers "error", and the next job gets a fresh worker.
import { afterAll, describe, expect, it } from "vitest";
import { DeadlineWorker } from "../../../server/kernel/worker/deadline-worker.js";

/** Answers { id, n } with n doubled; with grow: true keeps every array it makes until the heap runs out. */
const PROGRAM = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", (m) => {
  if (m.grow) { const kept = []; for (;;) kept.push(new Array(1e6).fill(kept.length)); }
  parentPort.postMessage({ id: m.id, n: m.n * 2 });
});
`;

describe("DeadlineWorker with a heap cap", () => {
  const worker = new DeadlineWorker<{ n: number; grow?: boolean }, { n: number }>(() => PROGRAM, {
    maxOldGenerationSizeMb: 32,
    maxYoungGenerationSizeMb: 8,
  });
  afterAll(() => worker.close());
  const never = new AbortController().signal;

  it("ends only the worker that outgrows its heap, then serves the next job on a fresh one", async () => {
    expect(await worker.run({ n: 2 }, Date.now() + 30_000, never)).toEqual({ reply: { id: 0, n: 4 } });
    const outgrown = await worker.run({ n: 1, grow: true }, Date.now() + 60_000, never);
    expect(outgrown).toMatchObject({ failed: "error" });
    expect(await worker.run({ n: 5 }, Date.now() + 30_000, never)).toMatchObject({ reply: { n: 10 } });
  }, 120_000);
});
