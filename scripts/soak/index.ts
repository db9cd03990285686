// `npm run soak`: drives a bounded mixed load (reads, searches, journaled writes and edits and their replays,
// terminal commands; `--mix=read-write`: reads and journaled edits only) against the built bridge on loopback, then
// prints throughput, p50/p99 per kind, the reads' p99 ÷ p50, errors by kind, lost and doubled changes, and RSS,
// file descriptors and WAL size over time (docs/RELIABILITY.md).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { percentile } from "../bench/harness.js";
import { startFleet, type Fleet } from "./fleet.js";
import { mergeTallies, runClients } from "./clients.js";
import { lostChanges, type LoadTally, type OpKind } from "./load.js";
import { parseSoakOptions, type SoakOptions } from "./options.js";
import { bridgeProbe, formatLoopDelay, readBridgeLoop, signalProbe, type LoopDelay } from "./loop-delay.js";
import { mainThreadTimes, startSampler, WAL_PEAK_EVERY_MS, type Sample, type ThreadTimes } from "./sampler.js";

/** The journaled-write latency the reliability issue targets (p99, until the outcome is known). */
const WRITE_P99_TARGET_MS = 3000;
/** Issue 34: the reads' p99 within this many times their p50. */
const READ_SPREAD_TARGET = 3;

function kindTable(tally: LoadTally, seconds: number): string[] {
  const kinds = [...new Set(tally.records.map((r) => r.kind))].sort() as OpKind[];
  const rows = kinds.map((kind) => {
    const ms = tally.records
      .filter((r) => r.kind === kind)
      .map((r) => r.ms)
      .sort((a, b) => a - b);
    return `| ${kind} | ${ms.length} | ${(ms.length / seconds).toFixed(1)} | ${percentile(ms, 50).toFixed(1)} | ${percentile(ms, 99).toFixed(1)} |`;
  });
  return ["| kind | requests | per s | p50 ms | p99 ms |", "|---|---|---|---|---|", ...rows];
}

function sampleTable(samples: Sample[]): string[] {
  return [
    "| t (s) | requests done | RSS MiB | fds | WAL KiB |",
    "|---|---|---|---|---|",
    ...samples.map(
      (s) =>
        `| ${s.atS.toFixed(0)} | ${s.requests ?? "-"} | ${s.rssMiB.toFixed(1)} | ${s.fds} | ${s.walKiB.toFixed(0)} |`,
    ),
  ];
}

/** Compares the mean of the last third of the samples with the third after warm-up: "flat" within 15 %. */
function drift(samples: Sample[], pick: (s: Sample) => number): { early: number; late: number; flat: boolean } {
  const body = samples.slice(1);
  const third = Math.max(1, Math.floor(body.length / 3));
  const mean = (xs: Sample[]) => xs.reduce((a, s) => a + pick(s), 0) / Math.max(1, xs.length);
  const early = mean(body.slice(third, 2 * third));
  const late = mean(body.slice(-third));
  return { early, late, flat: late <= early * 1.15 + 1 };
}

/** Every terminal command that answered ok must appear exactly once in its project's log. */
function terminalDoubles(fleet: Fleet, tally: LoadTally): { checked: number; doubles: number; missing: number } {
  let checked = 0;
  let doubles = 0;
  let missing = 0;
  for (const session of fleet.sessions) {
    const ids = tally.terminalIds.get(session.index) ?? [];
    let log = "";
    try {
      log = fs.readFileSync(path.join(session.root, "soak-x.log"), "utf8");
    } catch {
      // No command ran in this project.
    }
    const seen = new Map<string, number>();
    for (const line of log.split("\n").filter(Boolean)) seen.set(line, (seen.get(line) ?? 0) + 1);
    for (const id of ids) {
      checked += 1;
      const n = seen.get(id) ?? 0;
      if (n === 0) missing += 1;
      if (n > 1) doubles += 1;
    }
  }
  return { checked, doubles, missing };
}

function report(
  options: SoakOptions,
  tally: LoadTally,
  seconds: number,
  samples: Sample[],
  terminal: ReturnType<typeof terminalDoubles>,
  lost: ReturnType<typeof lostChanges>,
  thread: ThreadTimes | undefined,
  walPeakKiB: number,
  loops: Loops,
): string {
  const reads = tally.records
    .filter((r) => r.kind === "read")
    .map((r) => r.ms)
    .sort((a, b) => a - b);
  const spread = percentile(reads, 99) / percentile(reads, 50);
  const writes = tally.records
    .filter((r) => r.kind === "write")
    .map((r) => r.ms)
    .sort((a, b) => a - b);
  const writeP99 = percentile(writes, 99);
  const transport = [...tally.errors]
    .filter(([k]) => k === "transport" || k.startsWith("http_"))
    .reduce((a, [, n]) => a + n, 0);
  const rss = drift(samples, (s) => s.rssMiB);
  const wal = drift(samples, (s) => s.walKiB);
  const errors = [...tally.errors].sort((a, b) => b[1] - a[1]);
  return [
    `Soak${options.bridgeEntry ? ` of ${options.bridgeEntry}` : ""}: ${options.sessions} sessions, ${options.inflight} in flight from ${options.clients} client process${options.clients === 1 ? "" : "es"}, ` +
      `${options.gapMs === 0 ? "no gap (saturated)" : `${options.gapMs} ms untimed gap after each answer`}, ${seconds.toFixed(0)} s, seed ${options.seed}, mix ${options.mix}; ` +
      `${tally.records.length} requests (${(tally.records.length / seconds).toFixed(0)}/s) on ${new Date().toISOString().slice(0, 10)}.`,
    "",
    ...kindTable(tally, seconds),
    "",
    `- load average ${loadAtStart.toFixed(2)} at the start, ${os.loadavg()[0]!.toFixed(2)} at the end`,
    thread
      ? `- the bridge's event loop: ${(thread.cpuNs / 1000 / Math.max(1, tally.records.length)).toFixed(0)} µs on a core per request; ` +
        `runnable but waiting for a core ${((thread.waitNs / 1e9 / seconds) * 100).toFixed(1)} % of the run (the machine's load, not the bridge's work)`
      : "- the bridge's event loop: /proc/<pid>/schedstat unavailable",
    `- the bridge's event-loop delay: ${formatLoopDelay(loops.bridge)}`,
    ...loops.clients.map(
      (loop, c) =>
        `- soak client ${c + 1} of ${loops.clients.length}: its own event-loop delay ${formatLoopDelay(loop)} (a part of every answer's time it measures)`,
    ),
    `- the soak clients' CPU: ${((loops.clientCpuUs / 1e6 / seconds) * 100).toFixed(0)} % of a core in all`,
    `- reads' p99 ÷ p50: ${spread.toFixed(2)}× (target ≤ ${READ_SPREAD_TARGET}×: ${spread <= READ_SPREAD_TARGET ? "met" : "not met"})`,
    `- transport errors and non-200 answers: ${transport}`,
    `- lost changes: ${lost.lost} (files whose content is not what their last acknowledged write or edit left, of ${lost.checked} written)`,
    `- double executions: ${tally.doubleExecutions + terminal.doubles} (replays answered as new: ${tally.doubleExecutions}; terminal ids logged twice: ${terminal.doubles} of ${terminal.checked}; missing: ${terminal.missing})`,
    `- journaled write p99 until the outcome is known: ${writeP99.toFixed(0)} ms (target ≤ ${WRITE_P99_TARGET_MS} ms: ${writeP99 <= WRITE_P99_TARGET_MS ? "met" : "not met"}); writes that needed a /j poll after the default wait: ${tally.writesPolled}`,
    `- RSS after warm-up ${rss.early.toFixed(1)} MiB, at the end ${rss.late.toFixed(1)} MiB (${rss.flat ? "flat" : "growing"}); WAL ${wal.early.toFixed(0)} → ${wal.late.toFixed(0)} KiB (${wal.flat ? "flat" : "growing"}), peak ${(walPeakKiB / 1024).toFixed(1)} MiB (looked at every ${WAL_PEAK_EVERY_MS} ms)`,
    `- ok:false answers by kind: ${errors.length === 0 ? "none" : errors.map(([k, n]) => `${k} ${n}`).join(", ")}`,
    "",
    ...sampleTable(samples),
  ].join("\n");
}

function writeReport(file: string, markdown: string): void {
  const text = fs.readFileSync(file, "utf8");
  const start = "<!-- soak:start -->";
  const end = "<!-- soak:end -->";
  // Only markers on a line of their own count: the prose may name them (in backticks) without being replaced.
  const from = lineIndexOf(text, start, 0);
  const to = from === -1 ? -1 : lineIndexOf(text, end, from);
  if (from === -1 || to === -1)
    throw new Error(`${file} has no ${start} ... ${end} markers, each on a line of its own`);
  fs.writeFileSync(file, `${text.slice(0, from + start.length)}\n${markdown}\n${text.slice(to)}`);
}

/** Where `line` stands alone on a line of text, at or after `after`; -1 when it does not. */
function lineIndexOf(text: string, line: string, after: number): number {
  for (let at = text.indexOf(line, after); at !== -1; at = text.indexOf(line, at + 1)) {
    const alone =
      (at === 0 || text[at - 1] === "\n") && (at + line.length === text.length || text[at + line.length] === "\n");
    if (alone) return at;
  }
  return -1;
}

const loadAtStart = os.loadavg()[0]!;

/** Both ends' event-loop delay over the load (loop-delay.ts), one per client, and the clients' CPU time, in µs. */
interface Loops {
  bridge: LoopDelay | undefined;
  clients: LoopDelay[];
  clientCpuUs: number;
}

async function main(): Promise<void> {
  const options = parseSoakOptions(process.argv.slice(2));
  const profile = options.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(options.cpuProfDir)}`] : [];
  const loopFile = path.join(os.tmpdir(), `urlbridge-soak-loop-${process.pid}.json`);
  const probe = bridgeProbe(loopFile);
  const fleet = await startFleet(options.sessions, {
    nodeArgs: [...probe.nodeArgs, ...profile],
    env: probe.env,
    entry: options.bridgeEntry,
  });
  try {
    // Requests done so far, for the samples: known only while the load runs in this process.
    let live: LoadTally | undefined;
    const sampler = startSampler(fleet.pid, fleet.stateDir, options.sampleS * 1000, () => live?.records.length);
    let started = 0;
    let before: ThreadTimes | undefined;
    const { inflight, seed, mix, gapMs } = options;
    const plan = { sessions: fleet.sessions, inflight, seed, mix, gapMs, durationMs: options.durationS * 1000 };
    const onStart = () => {
      signalProbe(fleet.pid);
      started = performance.now();
      before = mainThreadTimes(fleet.pid);
    };
    const clients = await runClients(plan, options.clients, onStart, (tally) => (live = tally));
    const seconds = (performance.now() - started) / 1000;
    const after = mainThreadTimes(fleet.pid);
    signalProbe(fleet.pid);
    const thread =
      before && after ? { cpuNs: after.cpuNs - before.cpuNs, waitNs: after.waitNs - before.waitNs } : undefined;
    const merged = mergeTallies(clients.map((c) => c.tally));
    const loops = {
      bridge: await readBridgeLoop(loopFile),
      clients: clients.map((c) => c.loop),
      clientCpuUs: clients.reduce((a, c) => a + c.cpuUs, 0),
    };
    fs.rmSync(loopFile, { force: true });
    const samples = sampler.stop();
    const checks = [terminalDoubles(fleet, merged), lostChanges(merged)] as const;
    const markdown = report(options, merged, seconds, samples, ...checks, thread, sampler.walPeakKiB(), loops);
    process.stdout.write(`${markdown}\n`);
    if (options.writeTo) writeReport(path.resolve(options.writeTo), markdown);
  } finally {
    await fleet.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`soak failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
