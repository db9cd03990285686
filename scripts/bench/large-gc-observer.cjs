// Preloaded into the bridge by large-profile.ts (GC_LOG=file): counts the main thread's garbage collections by kind
// and their pauses, and the peak of its ArrayBuffer memory, and writes them as JSON to $LARGE_GC_LOG on exit. Bench
// tooling only; never loaded by the bridge otherwise.
const { isMainThread } = require("node:worker_threads");
const { PerformanceObserver, constants } = require("node:perf_hooks");
const fs = require("node:fs");

const out = process.env.LARGE_GC_LOG;
if (isMainThread && out) {
  const kinds = {
    [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
    [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb",
  };
  const tally = {};
  let peakArrayBuffers = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = kinds[entry.detail?.kind ?? entry.kind] ?? "other";
      const t = (tally[kind] ??= { count: 0, ms: 0, longest: 0 });
      t.count++;
      t.ms += entry.duration;
      t.longest = Math.max(t.longest, entry.duration);
    }
  }).observe({ entryTypes: ["gc"] });
  const sampler = setInterval(() => {
    peakArrayBuffers = Math.max(peakArrayBuffers, process.memoryUsage().arrayBuffers);
  }, 5);
  sampler.unref();
  process.on("exit", () => {
    fs.writeFileSync(out, JSON.stringify({ gc: tally, peakArrayBuffersMiB: peakArrayBuffers / 2 ** 20 }));
  });
}
