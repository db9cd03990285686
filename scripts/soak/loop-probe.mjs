// The soak's probe of the bridge's event loop, preloaded into the bridge's node (`--import`), so the server's code
// is the same with or without it: the first SIGUSR2 starts a perf_hooks event-loop delay histogram (1 ms
// resolution), the second stops it and writes its summary as JSON to URLBRIDGE_SOAK_LOOP_FILE (loop-delay.ts).
import fs from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

const file = process.env.URLBRIDGE_SOAK_LOOP_FILE;
if (file) {
  let histogram;
  process.on("SIGUSR2", () => {
    if (histogram === undefined) {
      histogram = monitorEventLoopDelay({ resolution: 1 });
      histogram.enable();
      return;
    }
    histogram.disable();
    const percentiles = Object.fromEntries(histogram.percentiles);
    fs.writeFileSync(
      file,
      JSON.stringify({ count: histogram.count, meanNs: histogram.mean, maxNs: histogram.max, percentiles }),
    );
  });
}
