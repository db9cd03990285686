// The edit worker's program (a worker thread, started by edit-offload.ts through kernel/worker/deadline-worker.ts):
// plans one /e of a large file (edit-plan.ts: decode, match, splice, encode, diff) so that no session waits for
// it. Answers each `{ id, ...job }` with `{ id, plan }`, `{ id, thrown }` (a ToolError's fields) or `{ id, error }`.
// A planned edit's whole SHA-256s come with it: the commit needs them, and here they cost the event loop nothing.
import { createHash } from "node:crypto";
import { parentPort } from "node:worker_threads";
import { isToolError } from "../../errors.js";
import { lowerThreadPriority } from "../../kernel/worker/background-priority.js";
import { planEdit, type EditJob } from "./edit-plan.js";

lowerThreadPriority();
const port = parentPort!;

const ownsItsMemory = (bytes: Uint8Array) => bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength;

/** Posts the answer with the file's bytes handed back (moved when they own their memory; edit-offload.ts moved them here). */
function reply(answer: object, previous: Uint8Array, moved: ArrayBuffer[] = []): void {
  const back = ownsItsMemory(previous) && !moved.includes(previous.buffer as ArrayBuffer);
  port.postMessage({ ...answer, previous }, back ? [...moved, previous.buffer as ArrayBuffer] : moved);
}
port.on("message", (message: { id: number } & EditJob) => {
  try {
    const planned = planEdit(message);
    const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
    const plan =
      planned.kind === "planned"
        ? { ...planned, hashes: { before: sha256(message.previous), after: sha256(planned.bytes) } }
        : planned;
    // The new bytes move to the parent rather than being copied, when they own their memory.
    const moved = plan.kind === "planned" && ownsItsMemory(plan.bytes) ? [plan.bytes.buffer as ArrayBuffer] : [];
    reply({ id: message.id, plan }, message.previous, moved);
  } catch (error) {
    if (isToolError(error)) {
      const { code, message: hint, detail, retryable, agentAction, repair, extra } = error;
      reply(
        { id: message.id, thrown: { code, hint, detail, retryable, agentAction, repair, extra } },
        message.previous,
      );
    } else reply({ id: message.id, error: error instanceof Error ? error.message : String(error) }, message.previous);
  }
});
