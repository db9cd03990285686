// Terminal checkpoints (issue 30): what the scans around a /x command cost on a 10k- and a 50k-file tree (the
// first scan, which reads and caches every file; a later one, which stats them; the after-scan), measured on the
// Checkpoints class in this process, and `/x echo` through a built bridge with URLBRIDGE_CHECKPOINTS on and off.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Checkpoints, type TakenCheckpoint } from "../../server/review/checkpoint/checkpoints.js";
import { encodeUrlText } from "../../server/url-grammar/encode.js";
import { makeBenchDir, startBenchBridge } from "./bridge.js";
import { measure, type BenchResult, type Stats } from "./harness.js";
import { createBenchClient } from "./http.js";

const TREES = [10_000, 50_000];
const FILES_PER_DIR = 100;
const FILE_BYTES = 2048;
const SCAN_RUNS = 5;
const CHANGED_FILES = 10;
const ECHO_RUNS = 30;
const ECHO_WARMUP = 3;

function makeTree(files: number): string {
  const root = makeBenchDir(`checkpoint-${files}`);
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, `d${Math.floor(i / FILES_PER_DIR)}`);
    if (i % FILES_PER_DIR === 0) fs.mkdirSync(dir);
    // Distinct contents: the cache is content-addressed, so equal files would be stored once.
    const line = `file ${i}\n`;
    fs.writeFileSync(
      path.join(dir, `f${i}.txt`),
      line.repeat(Math.ceil(FILE_BYTES / line.length)).slice(0, FILE_BYTES),
    );
  }
  return root;
}

const taken = (value: TakenCheckpoint | { notice: string }): TakenCheckpoint => {
  if ("notice" in value) throw new Error(value.notice);
  return value;
};

async function time<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** First scan, later before-scans, after-scans with nothing and with CHANGED_FILES changed (ms, median). */
async function scanCost(root: string, files: number) {
  const dir = makeBenchDir("checkpoint-cache");
  const checkpoints = new Checkpoints({ enabled: true, maxFiles: files * 2, maxBytes: 2 ** 40, dir });
  const project = { id: "bench", root };
  const first = await time(() => checkpoints.before(project, undefined));
  await checkpoints.after(taken(first.value));
  const warm: number[] = [];
  const after: number[] = [];
  const afterChanged: number[] = [];
  for (let run = 0; run < SCAN_RUNS; run++) {
    const before = await time(() => checkpoints.before(project, undefined));
    warm.push(before.ms);
    const change = run % 2 === 1;
    if (change)
      for (let i = 0; i < CHANGED_FILES; i++)
        fs.appendFileSync(path.join(root, `d${i}`, `f${i * FILES_PER_DIR}.txt`), `${run}\n`);
    const scanned = await time(() => checkpoints.after(taken(before.value)));
    if (change && scanned.value.changes?.length !== CHANGED_FILES) throw new Error("the after-scan missed changes");
    (change ? afterChanged : after).push(scanned.ms);
  }
  let cacheBytes = 0;
  for (const project of fs.readdirSync(dir))
    for (const blob of fs.readdirSync(path.join(dir, project)))
      cacheBytes += fs.statSync(path.join(dir, project, blob)).size;
  fs.rmSync(dir, { recursive: true, force: true });
  return { first: first.ms, warm: median(warm), after: median(after), afterChanged: median(afterChanged), cacheBytes };
}

async function echoLatency(root: string, checkpoints: boolean): Promise<Stats> {
  const bridge = await startBenchBridge(root, {
    permissions: { write: true, terminal: true },
    env: { URLBRIDGE_CHECKPOINTS: checkpoints ? "1" : "0", URLBRIDGE_CHECKPOINT_MAX_FILES: "200000" },
  });
  const client = createBenchClient(4);
  try {
    let n = 0;
    return await measure(ECHO_RUNS, ECHO_WARMUP, async () => {
      // Each run ends before the next (the first, which reads the whole tree into the cache, may outlast wait=).
      const target = `${bridge.bases.m}/x?run=${n++}&wait=20000&raw=${encodeUrlText("echo hi")}`;
      let text = (await client.get(target)).toString("utf8");
      let body = JSON.parse(text) as { ok: boolean; state?: string; poll?: string };
      while (body.ok && (body.state === "pending" || body.state === "running") && body.poll) {
        text = (await client.get(body.poll)).toString("utf8");
        body = JSON.parse(text) as typeof body;
      }
      if (body.ok !== true || body.state !== "succeeded") throw new Error(`/x failed: ${text.slice(0, 300)}`);
    });
  } finally {
    client.close();
    await bridge.close();
  }
}

export async function runCheckpointBench(): Promise<BenchResult> {
  const ms = (x: number) => x.toFixed(0);
  const costRows: string[] = [];
  const echoRows: string[] = [];
  const figures: Record<string, Stats> = {};
  for (const files of TREES) {
    const root = makeTree(files);
    try {
      const cost = await scanCost(root, files);
      costRows.push(
        `| ${files.toLocaleString("en")} files (${Math.round((files * FILE_BYTES) / 2 ** 20)} MiB) | ${ms(cost.first)} | ${ms(cost.warm)} | ${ms(cost.after)} | ${ms(cost.afterChanged)} | ${Math.round(cost.cacheBytes / 2 ** 20)} MiB |`,
      );
      for (const on of [false, true]) {
        const stats = await echoLatency(root, on);
        figures[`echo-${files}-${on ? "on" : "off"}`] = stats;
        echoRows.push(
          `| ${files.toLocaleString("en")} files | ${on ? "on" : "off"} | ${stats.p50.toFixed(1)} | ${stats.p99.toFixed(1)} |`,
        );
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }
  const markdown = [
    `| tree (${FILE_BYTES}-byte files, ${FILES_PER_DIR} a folder) | first scan, ms (reads and caches every file) | before-scan, ms (stat only) | after-scan, nothing changed, ms | after-scan, ${CHANGED_FILES} files changed, ms | cache on disk |`,
    "|---|---|---|---|---|---|",
    ...costRows,
    "",
    `| project | checkpoints | \`/x echo hi\` p50, ms | p99, ms (${ECHO_RUNS} runs) |`,
    "|---|---|---|---|",
    ...echoRows,
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? "unknown CPU"}, Node ${process.version}, load average ${fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")} at the end (the machine shared with other work). Scan figures are medians of ${SCAN_RUNS} runs (first scan: one run).`,
  ].join("\n");
  return { suite: "checkpoint", markdown, figures };
}
