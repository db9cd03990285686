// Runs HTML conversion off the main thread. turndown and html-to-text take about a second per megabyte of HTML,
// and a page may be 5 MiB: on the main thread that would stall every session of the bridge. Small pages are
// converted inline (a worker round trip costs more than they do); a conversion that overruns its deadline is
// cut short by terminating the worker, as the portable grep engine's regex worker is (search/regex-worker.ts).
import { createRequire } from "node:module";
import { DeadlineWorker } from "../../worker/deadline-worker.js";
import { CONVERT_LIBRARY_PACKAGES, convertHtml, convertLibraries, type HtmlTarget } from "./html.js";

/**
 * HTML up to this many characters is converted on the calling thread. Small, because the main thread cannot be
 * given a deadline: turndown's own trailing-whitespace expression is quadratic in a whitespace run inside the
 * page (a <pre> of 120 K tabs took 7.4 s), and at 8 K characters the worst such page costs ~30 ms.
 */
export const INLINE_CONVERT_CHARS = 8 * 1024;

const require = createRequire(import.meta.url);

function workerSource(): string {
  const libraries = Object.entries(CONVERT_LIBRARY_PACKAGES)
    .map(
      ([name, pkg]) =>
        `${JSON.stringify(name)}: ${name === "TurndownService" ? `require(${JSON.stringify(require.resolve(pkg))})` : `require(${JSON.stringify(require.resolve(pkg))}).${name}`}`,
    )
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
  private readonly worker = new DeadlineWorker<
    { html: string; baseHref: string; target: HtmlTarget },
    { text?: string; error?: string }
  >(workerSource);

  convert(
    html: string,
    baseHref: string,
    target: HtmlTarget,
    deadline: number,
    signal: AbortSignal,
  ): Promise<ConvertResult> {
    if (html.length <= INLINE_CONVERT_CHARS)
      return Promise.resolve({ text: convertHtml(html, baseHref, target, convertLibraries()) });
    return this.worker.run({ html, baseHref, target }, deadline, signal).then((outcome) => {
      if ("failed" in outcome)
        return { failed: outcome.failed, ...(outcome.message !== undefined ? { message: outcome.message } : {}) };
      const { text, error } = outcome.reply;
      return text !== undefined ? { text } : { failed: "error", message: error ?? "conversion failed" };
    });
  }

  close(): void {
    this.worker.close();
  }
}
