// Interactive processes: the input-to-screen round trip of a Python REPL through /i (type an expression and
// Enter, wait for its result line, answer the screen) and a screen read through /m, on one bridge.
import fs from "node:fs";
import { encodeQueryValue, encodeUrlText } from "../../server/url-grammar/encode.js";
import { makeBenchDir, startBenchBridge } from "./bridge.js";
import { measure, type BenchResult, type Stats } from "./harness.js";
import { createBenchClient } from "./http.js";

const RUNS = 60;
const WARMUP = 5;
const PYTHON = fs.existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

const ms = (s: Stats) => `${s.p50.toFixed(2)} ms (p99 ${s.p99.toFixed(2)})`;

export async function runPtyBench(): Promise<BenchResult> {
  const root = makeBenchDir("pty");
  const bridge = await startBenchBridge(root, { permissions: { write: false, terminal: true } });
  const client = createBenchClient(1);
  try {
    const m = bridge.bases.m!;
    const json = async (target: string) => {
      const body = JSON.parse((await client.get(target)).toString("utf8")) as Record<string, unknown>;
      if (body.ok !== true) throw new Error(`bench request failed: ${JSON.stringify(body).slice(0, 300)}`);
      return body;
    };
    const started = await json(`${m}/x?pty=1&wait=10000&raw=${encodeUrlText(`${PYTHON} -q`)}`);
    const pid = Number(started.pid);
    let n = 0;
    const roundTrip = await measure(RUNS, WARMUP, async () => {
      n += 1;
      // Each input is its own intent (run=n); the answer comes once the result line is on the screen.
      const body = await json(
        `${m}/i?pid=${pid}&run=${n}&key=enter&pattern=${encodeQueryValue(`^${n * 7}$`)}&raw=${encodeUrlText(`${n}*7`)}`,
      );
      if ((body.waited as { until: string }).until !== "pattern")
        throw new Error(`no result line: ${JSON.stringify(body)}`);
    });
    const view = await measure(RUNS, WARMUP, () => json(`${m}/m?pid=${pid}`));
    const markdown = [
      `| step (Python REPL on a 24 x 80 PTY, ${RUNS} runs) | p50 (p99) |`,
      "|---|---|",
      `| \`/i\` type \`n*7\` + Enter, wait for the result line, answer the screen | ${ms(roundTrip)} |`,
      `| \`/v\` read the screen | ${ms(view)} |`,
      "",
      `Measured ${new Date().toISOString().slice(0, 10)}, load average ${fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}.`,
    ].join("\n");
    return { suite: "pty", markdown, figures: { roundTrip, view } };
  } finally {
    client.close();
    await bridge.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}
