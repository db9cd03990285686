// Runs HTML conversion off the main thread. turndown and html-to-text take about a second per megabyte of HTML,
// and a page may be 5 MiB: on the main thread that would stall every session of the bridge. Small pages are
// converted inline (a worker round trip costs more than they do); a conversion that overruns its deadline is
// cut short by terminating the worker, as the portable grep engine's regex worker is (search/regex-worker.ts).
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { CONVERT_LIBRARY_PACKAGES, convertHtml, convertLibraries, type HtmlTarget } from "./html.js";

/** HTML up to this many characters is converted on the calling thread. */
export const INLINE_CONVERT_CHARS = 128 * 1024;

const require = createRequire(import.meta.url);

function workerSource(): string {
  const libraries = Object.entries(CONVERT_LIBRARY_PACKAGES)
    .map(([name, pkg]) => `${JSON.stringify(name)}: ${name === "TurndownService" ? `require(${JSON.stringify(require.resolve(pkg))})` : `require(${JSON.stringify(require.resolve(pkg))}).${name}`}`)
    .join(", ");
  return `
const { parentPort } = require("node:worker_threads");
// Transpilers that keep function names (esbuild's keepNames, used by tsx) wrap inner functions in __name().
const __name = (fn) => fn;
const libs = { ${libraries} };
const convertHtml = ${convertHtml.toString()};
parentPort.on("message", (job) => {
  try {
    parentPort.postMessage({ id: job.id, text: convertHtml(job.html, job.baseHref, job.target, libs) });
  } catch (error) {
    parentPort.postMessage({ id: job.id, error: String(error && error.message || error) });
  }
});
`;
}

export type ConvertResult = { text: string } | { failed: "timeout" | "aborted" | "error"; message?: string };

/** One lazily started worker per webfetch tool; replaced after it is terminated for overrunning a deadline. */
export class HtmlConverter {
  private worker: Worker | undefined;
  private nextId = 0;

  convert(html: string, baseHref: string, target: HtmlTarget, deadline: number, signal: AbortSignal): Promise<ConvertResult> {
    if (html.length <= INLINE_CONVERT_CHARS) return Promise.resolve({ text: convertHtml(html, baseHref, target, convertLibraries()) });
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise((resolve) => {
      const finish = (result: ConvertResult) => {
        clearTimeout(timer);
        worker.off("message", onMessage);
        worker.off("error", onError);
        signal.removeEventListener("abort", onAbort);
        resolve(result);
      };
      const kill = (result: ConvertResult) => {
        if (this.worker === worker) this.worker = undefined;
        void worker.terminate();
        finish(result);
      };
      const onMessage = (message: { id: number; text?: string; error?: string }) => {
        if (message.id !== id) return;
        finish(message.text !== undefined ? { text: message.text } : { failed: "error", message: message.error ?? "conversion failed" });
      };
      const onAbort = () => kill({ failed: "aborted" });
      const onError = (error: Error) => kill({ failed: "error", message: error.message });
      const timer = setTimeout(() => kill({ failed: "timeout" }), Math.max(0, deadline - Date.now()));
      worker.on("message", onMessage);
      worker.once("error", onError);
      signal.addEventListener("abort", onAbort, { once: true });
      worker.postMessage({ id, html, baseHref, target });
    });
  }

  private start(): Worker {
    const worker = new Worker(workerSource(), { eval: true });
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
