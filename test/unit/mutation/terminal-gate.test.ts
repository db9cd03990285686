import { describe, expect, it } from "vitest";
import { MAX_FOREGROUND_PROCESSES, TerminalGate } from "../../../server/mutation/terminal/terminal-gate.js";

const settled = async <T>(p: Promise<T>) => {
  let state: "pending" | "resolved" | "rejected" = "pending";
  p.then(
    () => (state = "resolved"),
    () => (state = "rejected"),
  );
  await new Promise((r) => setImmediate(r));
  return state;
};

describe("TerminalGate", () => {
  it("a bridge's gate has two foreground slots by default", () => {
    expect(MAX_FOREGROUND_PROCESSES).toBe(2);
    expect(new TerminalGate().slots).toBe(2);
  });

  it("lets two in, queues the third until a slot frees, in FIFO order", async () => {
    const gate = new TerminalGate({ slots: 2, maxQueued: 4 });
    const a = await gate.acquire();
    const b = await gate.acquire();
    const positions: number[] = [];
    const c = gate.acquire({ onQueued: (p) => positions.push(p) });
    const d = gate.acquire({ onQueued: (p) => positions.push(p) });
    expect(await settled(c)).toBe("pending");
    expect(gate.snapshot()).toEqual({ slots: 2, running: 2, queued: 2 });
    expect(positions).toEqual([1, 2]);
    a();
    a(); // releasing twice must not free a second slot
    expect(await settled(c)).toBe("resolved");
    expect(await settled(d)).toBe("pending");
    b();
    const releaseD = await d;
    (await c)();
    releaseD();
    expect(gate.snapshot()).toEqual({ slots: 2, running: 0, queued: 0 });
  });

  it("refuses with terminal_busy when the queue is full", async () => {
    const gate = new TerminalGate({ slots: 1, maxQueued: 1 });
    const a = await gate.acquire();
    const queued = gate.acquire();
    await expect(gate.acquire()).rejects.toMatchObject({ code: "terminal_busy", retryable: true });
    a();
    (await queued)();
  });

  it("gives up a queued place when the wait bound passes", async () => {
    const gate = new TerminalGate({ slots: 1, maxQueued: 2, maxWaitMs: 20 });
    const a = await gate.acquire();
    await expect(gate.acquire()).rejects.toMatchObject({ code: "terminal_busy" });
    expect(gate.snapshot().queued).toBe(0);
    a();
    expect(gate.snapshot().running).toBe(0);
  });

  it("waits at most the caller's own bound (its command's timeout), then answers terminal_busy", async () => {
    const gate = new TerminalGate({ slots: 1, maxQueued: 2, maxWaitMs: 60_000 });
    const a = await gate.acquire();
    const refused = gate.acquire({ maxWaitMs: 30 });
    await expect(refused).rejects.toMatchObject({
      code: "terminal_busy",
      retryable: true,
      agentAction: "wait_and_retry",
    });
    await expect(refused).rejects.toThrow(/within 30 ms/);
    expect(gate.snapshot().queued).toBe(0);
    a();
  });

  it("leaves the queue when aborted", async () => {
    const gate = new TerminalGate({ slots: 1 });
    const a = await gate.acquire();
    const controller = new AbortController();
    const waiting = gate.acquire({ signal: controller.signal });
    controller.abort(new Error("shutting down"));
    await expect(waiting).rejects.toThrow("shutting down");
    a();
    expect(gate.snapshot()).toEqual({ slots: 1, running: 0, queued: 0 });
  });
});
