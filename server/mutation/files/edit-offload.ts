// Where an /e's plan (edit-plan.ts) runs: a small file on the spot (a millisecond or two, less than a hand-off),
// a large one in the edit worker (edit-worker.ts), so its decode, match search, encode and diff hold up no other
// session (issue 34: a 10 MB edit held every session for seconds). Jobs go to the worker one at a time, its heap
// is capped, and a worker past its deadline or its heap is ended and replaced; the edit then changes nothing.
import { ErrorCode, ToolError, type ToolErrorOptions } from "../../errors.js";
import { DeadlineWorker } from "../../kernel/worker/deadline-worker.js";
import { workerEntry } from "../../kernel/worker/worker-entry.js";
import { planEdit, type EditJob, type EditPlan } from "./edit-plan.js";

/** Files up to this size are planned on the spot: 256 KiB, larger than nearly every source file. */
export const INLINE_EDIT_MAX_BYTES = 256 * 1024;
/** The worker's heap cap: a 100 MB file's bytes, its text and the text after the edit, with room to spare. */
export const EDIT_WORKER_HEAP_MB = 1024;
/** Past this, counted from the call (its turn in the queue included), the worker is ended and the edit refused. */
export const EDIT_WORKER_DEADLINE_MS = 60_000;
/** After a job this large the worker is ended, giving its heap back, rather than kept idle holding it. */
const RELEASE_AFTER_BYTES = 64 * 1024 * 1024;

type Thrown = { code: ErrorCode; hint: string } & ToolErrorOptions;
type WorkerReply = { plan?: EditPlan; thrown?: Thrown; error?: string };

const planner = new DeadlineWorker<EditJob, WorkerReply>(() => workerEntry(import.meta.url, "edit-worker"), {
  maxOldGenerationSizeMb: EDIT_WORKER_HEAP_MB,
});

/** One job in the worker at a time: each holds copies of its file, so jobs at once could outgrow the heap. */
let queue: Promise<unknown> = Promise.resolve();

/** The plan of one edit: computed here for a small file, else in the worker, answering the same either way. */
export async function runEditPlan(job: EditJob & { previous: Buffer }, signal: AbortSignal): Promise<EditPlan> {
  if (job.previous.length <= INLINE_EDIT_MAX_BYTES) return planEdit(job);
  const deadline = Date.now() + EDIT_WORKER_DEADLINE_MS;
  const turn = queue.then(() => planInWorker(job, deadline, signal));
  queue = turn.catch(() => undefined);
  return turn;
}

async function planInWorker(job: EditJob, deadline: number, signal: AbortSignal): Promise<EditPlan> {
  signal.throwIfAborted();
  const outcome = Date.now() < deadline ? await planner.run(job, deadline, signal) : { failed: "timeout" as const };
  if (job.previous.length > RELEASE_AFTER_BYTES) planner.close();
  if ("failed" in outcome) {
    signal.throwIfAborted();
    throw overrun(job, outcome.failed === "timeout" ? "time" : "memory");
  }
  const { plan, thrown, error } = outcome.reply;
  if (thrown) {
    const { code, hint, ...options } = thrown;
    throw new ToolError(code, hint, options);
  }
  if (!plan) throw new Error(`the edit worker failed: ${error ?? "no answer"}`);
  if (plan.kind !== "planned") return plan;
  // Structured cloning hands a Buffer over as a plain Uint8Array.
  return { ...plan, bytes: Buffer.from(plan.bytes.buffer, plan.bytes.byteOffset, plan.bytes.byteLength) };
}

function overrun(job: EditJob, what: "time" | "memory"): ToolError {
  const mib = (job.previous.byteLength / (1024 * 1024)).toFixed(1);
  return new ToolError(
    ErrorCode.fileTooLarge,
    `Editing ${job.display} (${mib} MiB) needed more ${what} than one edit is given (${EDIT_WORKER_DEADLINE_MS / 1000} s, ${EDIT_WORKER_HEAP_MB} MiB); nothing was changed. Replace the file whole with /w, or split it into smaller files.`,
    { detail: { path: job.display, bytes: job.previous.byteLength, bound: what }, retryable: false },
  );
}
