// Lowers the scheduling priority of the calling worker thread, so that on a machine with few cores the bridge's
// event-loop thread, which answers every session, wins a core over a large edit's plan or an outline's parse
// (issue 34: beside a 10 MB edit the loop waited for a core a third of the time). On Linux the nice value belongs
// to the thread: setpriority(2) on the calling thread's id, which os.setPriority(0, …) is, leaves the main
// thread and every other thread at theirs. Lowering needs no privilege.
import os from "node:os";

/** The nice value of a background worker thread: its CFS weight is a ninth of the event loop's (nice 0). */
export const BACKGROUND_NICE = 10;

/** Renices the calling thread to BACKGROUND_NICE; a platform that refuses (or renices the process) is left as is. */
export function lowerThreadPriority(): void {
  // Elsewhere than Linux the call would renice the whole process, event loop included.
  if (process.platform !== "linux") return;
  try {
    if (os.getPriority(0) < BACKGROUND_NICE) os.setPriority(0, BACKGROUND_NICE);
  } catch {
    // A sandbox that forbids setpriority leaves the thread at its priority: slower to yield, never wrong.
  }
}
