// Idle McpServers for the stateless 2025-era HTTP leg, by tool listing (server.ts listingKeyOf). Building a server
// registers every tool the capability lists; doing that on every POST was a fifth of a call's time in the bridge.
// A server serves one request at a time: taken, connected to that request's own transport, closed, given back.
// Only after methods that leave no state on the instance (initialize does: client capabilities and version).
import type { McpServer } from "@modelcontextprotocol/server";
import { listingKeyOf, type McpScope } from "./server.js";

/** Idle servers kept per listing; more concurrent requests build more, and the extra ones are dropped after. */
export const MAX_IDLE_PER_LISTING = 8;
/** Methods after which an instance is as it was built: everything else (initialize above all) discards it. */
const STATELESS_METHODS = new Set([
  "ping",
  "tools/list",
  "tools/call",
  "notifications/initialized",
  "notifications/cancelled",
]);

export interface ServerPool {
  take(scope: McpScope): McpServer;
  /** Gives a server back after a request that consisted of `message` (a batch: all of its methods must qualify). */
  give(scope: McpScope, server: McpServer, message: unknown): void;
}

/** Whether `message` leaves a server as it was built. */
export function leavesNoState(message: unknown): boolean {
  const all = Array.isArray(message) ? message : [message];
  return (
    all.length > 0 &&
    all.every(
      (m) => m !== null && typeof m === "object" && STATELESS_METHODS.has((m as { method?: unknown }).method as string),
    )
  );
}

export function createServerPool(build: (scope: McpScope) => McpServer): ServerPool {
  const idle = new Map<string, McpServer[]>();
  return {
    take(scope) {
      return idle.get(listingKeyOf(scope))?.pop() ?? build(scope);
    },
    give(scope, server, message) {
      if (!leavesNoState(message)) return;
      const key = listingKeyOf(scope);
      let list = idle.get(key);
      if (!list) idle.set(key, (list = []));
      if (list.length < MAX_IDLE_PER_LISTING) list.push(server);
    },
  };
}
