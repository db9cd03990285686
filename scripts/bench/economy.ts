// `npm run bench economy`: issue 14's reference task (test/economy/reference-task.ts) played against the built
// bridge, every variant of how an agent's URLs reach it: GETs after Init and bytes transferred, against the bounds.
import { startBenchBridge, makeBenchDir } from "./bridge.js";
import type { BenchResult } from "./harness.js";
import {
  playReferenceTask,
  referenceProjectFixed,
  TASK_BYTES_BOUND,
  TASK_GET_BOUND,
  TASK_VARIANTS,
  writeReferenceProject,
} from "../../test/economy/reference-task.js";

export async function runEconomyBench(): Promise<BenchResult> {
  const rows: string[] = [];
  for (const variant of TASK_VARIANTS) {
    const root = makeBenchDir("economy");
    writeReferenceProject(root);
    const bridge = await startBenchBridge(root, { permissions: { write: true, terminal: true } });
    try {
      const run = await playReferenceTask({ r: bridge.bases.r, m: bridge.bases.m! }, variant);
      const ok = run.gets.every((g) => g.body.ok === true) && referenceProjectFixed(root) && run.exitCode === 0;
      const met = ok && run.gets.length <= TASK_GET_BOUND && run.totalBytes <= TASK_BYTES_BOUND;
      rows.push(
        `| ${variant.name} | ${variant.description} | ${run.gets.length} | ${run.gets.map((g) => `/${g.route} ${g.bytes}`).join(", ")} | ${run.totalBytes} | ${ok ? "fixed, tests pass" : "**failed**"} | ${met ? "met" : "**missed**"} |`,
      );
    } finally {
      await bridge.close();
    }
  }
  const markdown = [
    "### Agent economy: the reference task",
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} against the built server. A Python project with a two-file bug; the agent reads both`,
    "files in one `/r`, fixes both with one `/a`, runs `python3 -m unittest` with `wait=20000` and reads the result in that answer.",
    "Bytes are the request target plus the answer body of every GET after Init (test/economy/reference-task.ts; the same",
    `task is a test with the same bounds). Bounds: ≤ ${TASK_GET_BOUND} GETs after Init and ≤ ${TASK_BYTES_BOUND / 1024} KiB.`,
    "",
    "| variant | how the URLs reach the bridge | GETs | bytes per GET | bytes | result | bounds |",
    "|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
  return { suite: "economy", markdown, figures: {} };
}
