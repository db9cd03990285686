import { describe, expect, it } from "vitest";
import { ErrorCode, isToolError } from "../../../server/errors.js";
import { createSearchGate } from "../../../server/kernel/search/search-gate.js";
import type { ReleaseSlot } from "../../../server/kernel/tool/slot-gate.js";

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("the bridge's slots, served in turns by session", () => {
  it("grants free slots at once, then serves waiting sessions in turns, each session's own calls in order", async () => {
    const gate = createSearchGate({ slots: 1, maxQueued: 10 });
    const first = await gate.acquire({ key: "a" });
    const granted: string[] = [];
    const waiting = new Map<string, Promise<ReleaseSlot>>();
    const wait = (key: string, name: string) =>
      waiting.set(
        name,
        gate.acquire({ key }).then((release) => (granted.push(name), release)),
      );
    [
      ["a", "a1"],
      ["a", "a2"],
      ["a", "a3"],
      ["b", "b1"],
      ["c", "c1"],
      ["b", "b2"],
    ].forEach(([key, name]) => wait(key!, name!));
    expect(gate.snapshot()).toEqual({ slots: 1, running: 1, queued: 6 });
    let release: ReleaseSlot = first;
    for (let i = 0; i < waiting.size; i++) {
      release();
      await tick();
      expect(granted).toHaveLength(i + 1);
      release = await waiting.get(granted[i]!)!;
    }
    release();
    expect(granted).toEqual(["a1", "b1", "c1", "a2", "b2", "a3"]);
    expect(gate.snapshot()).toEqual({ slots: 1, running: 0, queued: 0 });
  });

  it("refuses a caller past the queue's bound with search_busy, retryable, nothing run", async () => {
    const gate = createSearchGate({ slots: 1, maxQueued: 1 });
    const held = await gate.acquire({ key: "a" });
    const queued = gate.acquire({ key: "b" });
    const refused = await gate.acquire({ key: "c" }).catch((error: unknown) => error);
    expect(isToolError(refused) && refused.toFailure()).toMatchObject({
      errorCode: ErrorCode.searchBusy,
      retryable: true,
      agentAction: "wait_and_retry",
      errorDetail: { slots: 1, running: 1, queued: 1 },
    });
    held();
    (await queued)();
    expect(gate.snapshot()).toEqual({ slots: 1, running: 0, queued: 0 });
  });

  it("fails a caller that waited its bound, and lets an aborted one go, both leaving the queue", async () => {
    const gate = createSearchGate({ slots: 1, maxQueued: 4, maxWaitMs: 20 });
    const held = await gate.acquire({ key: "a" });
    const timedOut = await gate.acquire({ key: "b" }).catch((error: unknown) => error);
    expect(isToolError(timedOut) && timedOut.code).toBe(ErrorCode.searchBusy);
    const controller = new AbortController();
    const aborted = gate.acquire({ key: "c", signal: controller.signal }).catch((error: unknown) => error);
    controller.abort(new Error("shutting down"));
    expect(((await aborted) as Error).message).toBe("shutting down");
    expect(gate.snapshot()).toEqual({ slots: 1, running: 1, queued: 0 });
    held();
    expect(gate.snapshot()).toEqual({ slots: 1, running: 0, queued: 0 });
  });
});
