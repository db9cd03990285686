// One worker thread for work that may not finish in time (a backtracking regex, converting megabytes of HTML,
// parsing a large source file): started on first use from a self-contained program or a module of its own
// (worker-entry.ts), fed one job at a time by id, and terminated, then replaced, when a job overruns its
// deadline, its caller aborts, or the worker fails. The event loop never waits on it.
import { Worker, type ResourceLimits } from "node:worker_threads";
import type { WorkerEntry } from "./worker-entry.js";

export type DeadlineOutcome<R> = { reply: R } | { failed: "timeout" | "aborted" | "error"; message?: string };

export class DeadlineWorker<J extends object, R> {
  private worker: Worker | undefined;
  private nextId = 0;

  /**
   * `program` is the worker's CommonJS source, or the module to run (worker-entry.ts): either answers each
   * `{ id, ...job }` message with `{ id, ...reply }`.
   */
  constructor(
    private readonly program: () => string | WorkerEntry,
    /** Heap bounds for the thread: past them the worker alone ends (the job answers "error"), never the process. */
    private readonly resourceLimits?: ResourceLimits,
  ) {}

  /** `transfer`: buffers of the job moved to the worker rather than copied (unusable here until it hands them back). */
  run(job: J, deadline: number, signal: AbortSignal, transfer: ArrayBuffer[] = []): Promise<DeadlineOutcome<R>> {
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise((resolve) => {
      const finish = (outcome: DeadlineOutcome<R>) => {
        clearTimeout(timer);
        worker.off("message", onMessage);
        worker.off("error", onError);
        signal.removeEventListener("abort", onAbort);
        resolve(outcome);
      };
      const kill = (outcome: DeadlineOutcome<R>) => {
        if (this.worker === worker) this.worker = undefined;
        void worker.terminate();
        finish(outcome);
      };
      const onMessage = (message: { id: number } & R) => {
        if (message.id === id) finish({ reply: message });
      };
      const onAbort = () => kill({ failed: "aborted" });
      const onError = (error: Error) => kill({ failed: "error", message: error.message });
      const timer = setTimeout(() => kill({ failed: "timeout" }), Math.max(0, deadline - Date.now()));
      worker.on("message", onMessage);
      worker.once("error", onError);
      signal.addEventListener("abort", onAbort, { once: true });
      worker.postMessage({ id, ...job }, transfer);
    });
  }

  private start(): Worker {
    const program = this.program();
    const limits = this.resourceLimits ? { resourceLimits: this.resourceLimits } : {};
    const worker =
      typeof program === "string"
        ? new Worker(program, { eval: true, ...limits })
        : new Worker(program.file, { workerData: program.workerData, ...limits });
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
