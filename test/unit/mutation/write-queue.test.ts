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

  describe("lanes (one file each)", () => {
    /** A job that records its start, then waits until the test opens it. */
    function gated(events: string[], name: string) {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const fn = async () => {
        events.push(`start ${name}`);
        await gate;
        events.push(`end ${name}`);
        return name;
      };
      return { fn, open };
    }
    const turns = () => sleep(1);

    it("runs jobs of different lanes side by side and of one lane in order", async () => {
      const queue = new ProjectWriteQueue();
      const events: string[] = [];
      const [a1, b, a2] = [gated(events, "a1"), gated(events, "b"), gated(events, "a2")];
      const all = Promise.all([
        queue.run("/p", a1.fn, "/p/a"),
        queue.run("/p", b.fn, "/p/b"),
        queue.run("/p", a2.fn, "/p/a"),
      ]);
      await turns();
      expect(events).toEqual(["start a1", "start b"]);
      a1.open();
      await turns();
      expect(events).toEqual(["start a1", "start b", "end a1", "start a2"]);
      b.open();
      a2.open();
      expect(await all).toEqual(["a1", "b", "a2"]);
      await turns();
      expect(queue.busyProjects).toBe(0);
    });

    it("runs a job without a lane after every earlier job and before every later one", async () => {
      const queue = new ProjectWriteQueue();
      const events: string[] = [];
      const [a, whole, b] = [gated(events, "a"), gated(events, "whole"), gated(events, "b")];
      const all = Promise.all([
        queue.run("/p", a.fn, "/p/a"),
        queue.run("/p", whole.fn),
        queue.run("/p", b.fn, "/p/b"),
      ]);
      await turns();
      expect(events).toEqual(["start a"]);
      a.open();
      await turns();
      expect(events).toEqual(["start a", "end a", "start whole"]);
      whole.open();
      await turns();
      expect(events).toEqual(["start a", "end a", "start whole", "end whole", "start b"]);
      b.open();
      await all;
      await turns();
      expect(queue.busyProjects).toBe(0);
    });
  });
});
