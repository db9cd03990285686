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
type WorkerReply = { plan?: EditPlan; thrown?: Thrown; error?: string; previous?: Uint8Array };

/** An edit's plan, and the file's bytes as read (handed to the worker and back, so the caller's copy may be spent). */
export interface PlanOutcome {
  plan: EditPlan;
  previous: Buffer;
}

/** True when the buffer is the whole of its memory, which can then move between threads instead of being copied. */
const ownsItsMemory = (bytes: Uint8Array) => bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength;

const planner = new DeadlineWorker<EditJob, WorkerReply>(() => workerEntry(import.meta.url, "edit-worker"), {
  maxOldGenerationSizeMb: EDIT_WORKER_HEAP_MB,
});

/** One job in the worker at a time: each holds copies of its file, so jobs at once could outgrow the heap. */
let queue: Promise<unknown> = Promise.resolve();

/**
 * The plan of one edit: computed here for a small file, else in the worker, answering the same either way. A large
 * file's bytes are moved to the worker and back rather than copied (a 10 MB copy held the event loop ~12 ms), so
 * `job.previous` is spent: use the outcome's `previous`.
 */
export async function runEditPlan(job: EditJob & { previous: Buffer }, signal: AbortSignal): Promise<PlanOutcome> {
  if (job.previous.length <= INLINE_EDIT_MAX_BYTES) return { plan: planEdit(job), previous: job.previous };
  const deadline = Date.now() + EDIT_WORKER_DEADLINE_MS;
  const turn = queue.then(() => planInWorker(job, deadline, signal));
  queue = turn.catch(() => undefined);
  return turn;
}

async function planInWorker(job: EditJob, deadline: number, signal: AbortSignal): Promise<PlanOutcome> {
  signal.throwIfAborted();
  // Taken before the bytes move: once moved, job.previous reads as empty until the worker hands them back.
  const size = job.previous.byteLength;
  const transfer = ownsItsMemory(job.previous) ? [job.previous.buffer as ArrayBuffer] : [];
  const outcome =
    Date.now() < deadline ? await planner.run(job, deadline, signal, transfer) : { failed: "timeout" as const };
  if (size > RELEASE_AFTER_BYTES) planner.close();
  if ("failed" in outcome) {
    signal.throwIfAborted();
    throw overrun(job.display, size, outcome.failed === "timeout" ? "time" : "memory");
  }
  const { plan: planned, thrown, error, previous: back } = outcome.reply;
  const previous = back ? Buffer.from(back.buffer, back.byteOffset, back.byteLength) : Buffer.from(job.previous);
  const plan = planned && planned.kind === "planned" ? { ...planned, bytes: asBuffer(planned.bytes) } : planned;
  if (thrown) {
    const { code, hint, ...options } = thrown;
    throw new ToolError(code, hint, options);
  }
  if (!plan) throw new Error(`the edit worker failed: ${error ?? "no answer"}`);
  return { plan, previous };
}

/** Structured cloning hands a Buffer over as a plain Uint8Array. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function overrun(display: string, size: number, what: "time" | "memory"): ToolError {
  const mib = (size / (1024 * 1024)).toFixed(1);
  return new ToolError(
    ErrorCode.fileTooLarge,
    `Editing ${display} (${mib} MiB) needed more ${what} than one edit is given (${EDIT_WORKER_DEADLINE_MS / 1000} s, ${EDIT_WORKER_HEAP_MB} MiB); nothing was changed. Replace the file whole with /w, or split it into smaller files.`,
    { detail: { path: display, bytes: size, bound: what }, retryable: false },
  );
}
