// The edit worker's program (a worker thread, started by edit-offload.ts through kernel/worker/deadline-worker.ts):
// plans one /e of a large file (edit-plan.ts: decode, match, splice, encode, diff) so that no session waits for
// it. Answers each `{ id, ...job }` with `{ id, plan }`, `{ id, thrown }` (a ToolError's fields) or `{ id, error }`.
// A planned edit's whole SHA-256s come with it: the commit needs them, and here they cost the event loop nothing.
import { createHash } from "node:crypto";
import { parentPort } from "node:worker_threads";
import { isToolError } from "../../errors.js";
import { planEdit, type EditJob } from "./edit-plan.js";

const port = parentPort!;
port.on("message", (message: { id: number } & EditJob) => {
  try {
    const planned = planEdit(message);
    const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
    const plan =
      planned.kind === "planned"
        ? { ...planned, hashes: { before: sha256(message.previous), after: sha256(planned.bytes) } }
        : planned;
    // The new bytes move to the parent rather than being copied, when they own their memory.
    const own =
      plan.kind === "planned" && plan.bytes.byteOffset === 0 && plan.bytes.buffer.byteLength === plan.bytes.length;
    port.postMessage({ id: message.id, plan }, own ? [plan.bytes.buffer as ArrayBuffer] : []);
  } catch (error) {
    if (isToolError(error)) {
      const { code, message: hint, detail, retryable, agentAction, repair, extra } = error;
      port.postMessage({ id: message.id, thrown: { code, hint, detail, retryable, agentAction, repair, extra } });
    } else port.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) });
  }
});
