import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { ProjectWriteQueue } from "../../../server/mutation/journal/write-queue.js";

describe("per-project write queue", () => {
  it("runs jobs of one project one at a time, in arrival order, even when one fails", async () => {
    const queue = new ProjectWriteQueue();
    const events: string[] = [];
    const job =
      (name: string, fail = false) =>
      async () => {
        events.push(`start ${name}`);
        await sleep(5);
        events.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      queue.run("/p", job("a")),
      queue.run("/p", job("b", true)),
      queue.run("/p", job("c")),
    ]);
    expect(events).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(queue.busyProjects).toBe(0);
  });

  it("lets different projects proceed side by side", async () => {
    const queue = new ProjectWriteQueue();
    const events: string[] = [];
    const job = (name: string) => async () => {
      events.push(`start ${name}`);
      await sleep(5);
      events.push(`end ${name}`);
    };
    await Promise.all([queue.run("/p", job("p")), queue.run("/q", job("q"))]);
    expect(events.slice(0, 2).sort()).toEqual(["start p", "start q"]);
  });
});
