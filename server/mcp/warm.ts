// The MCP edge's first-use work, done in the background shortly after start-up instead of in the first MCP call:
// that call froze every session for 2.6-4.2 s (issue 26 item 9) while the bridge converted each tool's
// outputSchema to JSON Schema and compiled it and loaded the HTTP leg's modules (and with them the MCP SDK, which
// start-up itself does not load). It starts a moment after the planes listen, so a restart's first answers (the
// health probe, agents' retried calls) do not wait behind it (issue 34 item 7), and each tool's schema is one step
// with a macrotask between steps, so requests that arrive meanwhile are served between them.
import { setImmediate as nextTurn, setTimeout as sleep } from "node:timers/promises";
import type { McpDeps } from "./server.js";

/** How long after the planes listen the warm-up starts; an MCP call that comes sooner does the work itself. */
export const MCP_WARM_DELAY_MS = 1000;

/** Resolves once every listable tool's outputSchema is converted and the HTTP leg is loaded (or `signal` aborted). */
export async function warmMcp(
  deps: Pick<McpDeps, "tools" | "plugins" | "log">,
  signal: AbortSignal,
  delayMs = MCP_WARM_DELAY_MS,
): Promise<void> {
  try {
    // Not ref'd: a bridge that is closed (or a process that is done) does not wait for the warm-up to begin.
    await sleep(delayMs, undefined, { ref: false, signal }).catch(() => undefined);
    if (signal.aborted) return;
    const { schemaWarmSteps } = await import("./server.js");
    for (const step of schemaWarmSteps(deps)) {
      await nextTurn();
      if (signal.aborted) return;
      step();
    }
    await nextTurn();
    if (signal.aborted) return;
    await import("./http.js");
  } catch (error) {
    // Nothing is lost: the first MCP call does the same work itself (and reports a real failure there).
    deps.log.warn("MCP warm-up failed; the first MCP call will do it", {
      error: error instanceof Error ? error.message : String(error),
    });
  }
}
