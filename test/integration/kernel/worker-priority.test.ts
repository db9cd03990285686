// Issue 34: the bridge's background worker threads (here the edit worker) run at a lower priority than the event
// loop, so on a machine with few cores the loop wins a core over a large edit's plan. On Linux the nice value is
// the thread's: the worker's own thread is reniced, the thread that serves sessions is not.
import fs from "node:fs";
import os from "node:os";
import { describe, expect, it } from "vitest";
import { BACKGROUND_NICE } from "../../../server/kernel/worker/background-priority.js";
import { INLINE_EDIT_MAX_BYTES, runEditPlan } from "../../../server/mutation/files/edit-offload.js";

/** The nice value of each thread of this process (/proc/self/task/<tid>/stat, field 19). */
function threadNices(): number[] {
  return fs.readdirSync("/proc/self/task").flatMap((tid) => {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      return [Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}

// Where the tests themselves run reniced to BACKGROUND_NICE or past it, no thread could be told apart.
const loopNice = process.platform === "linux" ? os.getPriority(0) : BACKGROUND_NICE;

describe.runIf(loopNice < BACKGROUND_NICE)("background worker priority", () => {
  it("plans a large edit in a worker thread reniced to BACKGROUND_NICE, leaving the event loop's thread as it was", async () => {
    const text = "a line of a large file\n".repeat(Math.ceil((2 * INLINE_EDIT_MAX_BYTES) / 23));
    const previous = Buffer.from(`first\n${text}`);
    const job = { previous, display: "large.txt", old: "first", replacement: "the first", all: false };
    const { plan } = await runEditPlan(job, new AbortController().signal);
    expect(plan.kind).toBe("planned");
    expect(os.getPriority(0)).toBe(loopNice);
    expect(threadNices()).toContain(BACKGROUND_NICE);
  });
});
