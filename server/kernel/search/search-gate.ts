// The bridge's content-search slots: at most MAX_CONCURRENT_SEARCHES /g run at once across every session, later
// ones wait their session's turn (kernel/tool/slot-gate.ts) for at most MAX_SEARCH_MS, then answer search_busy
// (retryable: nothing was searched). One per bridge, made by createReadTools.
import { ErrorCode, ToolError } from "../../errors.js";
import { SlotGate, type GateSnapshot } from "../tool/slot-gate.js";
import { MAX_CONCURRENT_SEARCHES, MAX_QUEUED_SEARCHES, MAX_SEARCH_MS } from "../limits.js";

export interface SearchGateOptions {
  slots?: number;
  maxQueued?: number;
  maxWaitMs?: number;
}

const busy = (snapshot: GateSnapshot, why: string) =>
  new ToolError(
    ErrorCode.searchBusy,
    `${why} Nothing was searched; fetch the same URL again in a few seconds, or narrow path= so each search ends sooner.`,
    {
      detail: snapshot,
      retryable: true,
      agentAction: "wait_and_retry",
    },
  );

export function createSearchGate(options: SearchGateOptions = {}): SlotGate {
  return new SlotGate({
    slots: options.slots ?? MAX_CONCURRENT_SEARCHES,
    maxQueued: options.maxQueued ?? MAX_QUEUED_SEARCHES,
    maxWaitMs: options.maxWaitMs ?? MAX_SEARCH_MS,
    full: (snapshot) =>
      busy(
        snapshot,
        `${snapshot.running} searches are running across the bridge's sessions and ${snapshot.queued} are waiting for them.`,
      ),
    timedOut: (snapshot, waitMs) =>
      busy(
        snapshot,
        `No search slot freed within ${waitMs / 1000} s (${snapshot.running} searches running across the bridge's sessions).`,
      ),
  });
}
