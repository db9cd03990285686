// The MCP edge's first-use work, done at start-up in the background instead of in the first MCP call: that call
// froze every session for 2.6-4.2 s (issue 26 item 9) while the bridge converted each tool's outputSchema to JSON
// Schema and compiled it (about 1.4 s for a mutation listing) and loaded the HTTP leg's modules. Each tool's
// schema is one step, with a macrotask between steps, so requests that arrive meanwhile are served between them.
import { setImmediate as nextTurn } from "node:timers/promises";
import { schemaWarmSteps, type McpDeps } from "./server.js";

/** Resolves once every listable tool's outputSchema is converted and the HTTP leg is loaded (or `signal` aborted). */
export async function warmMcp(deps: Pick<McpDeps, "tools" | "plugins" | "log">, signal: AbortSignal): Promise<void> {
  try {
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
