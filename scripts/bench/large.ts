// Large-file benchmarks (issue 34): what one /r page costs as the file grows, a 16 MiB file read through by pages
// against bare HTTP round trips carrying the same bytes, and a head-of-line scenario (one session pages a 16 MiB
// file and edits a 10 MB one while another reads a 2 KiB file). Measured as a client does: Node's own fetch
// (keep-alive), one call at a time per session, and an untimed gap after each call so the server's after-work
// lands in its own time.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { encodeQueryValue, encodeUrlText } from "../../server/url-grammar/encode.js";
import { createControlPost, giveToAgent, makeBenchDir, spawnServer } from "./bridge.js";
import { statsOf, type BenchResult, type Stats } from "./harness.js";
import { HOL_GAP_MS, HOL_READS, measureHeadOfLine } from "./head-of-line.js";
import { startFloorServer, stopChild } from "./http.js";

const KiB = 1024;
const MiB = 1024 * KiB;
const PAGE = 128 * KiB;
/** The untimed pause after each call. */
const GAP_MS = 20;
const PAGE_RUNS = 150;
const WARMUP = 10;
const THROUGH_RUNS = 3;
/** Timestamps are coarse: a file changed in the last 2 s is scanned on every read (large-file-index.ts). */
const SETTLE_MS = 2500;
const TARGETS = { midPage: 1.5, endPage: 2, readThrough: 2, holP50: 2, holP99: 3 };

type Params = Array<[string, string | number]>;

export function url(base: string, route: string, params: Params, raw?: string): string {
  const parts = params.map(([k, v]) => `${k}=${encodeQueryValue(String(v))}`);
  if (raw !== undefined) parts.push(`raw=${encodeUrlText(raw)}`);
  return `${base}/${route}?${parts.join("&")}`;
}

export async function getJson(target: string): Promise<Record<string, unknown>> {
  const body = (await (await fetch(target)).json()) as Record<string, unknown>;
  if (body.ok !== true) throw new Error(`bench request failed: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

/** Times the functions in turns (a, b, a, b, ...), each followed by the untimed gap; one Stats per function. */
async function interleaved(runs: number, fns: Array<() => Promise<unknown>>): Promise<Stats[]> {
  for (let i = 0; i < WARMUP; i++) for (const fn of fns) await fn();
  const samples = fns.map(() => [] as number[]);
  for (let i = 0; i < runs; i++)
    for (const [k, fn] of fns.entries()) {
      const start = performance.now();
      await fn();
      samples[k]!.push(performance.now() - start);
      await sleep(GAP_MS);
    }
  return samples.map(statsOf);
}

/** A text file of `bytes` bytes in 80-byte numbered lines, written in chunks; its line count. */
export function writeLog(file: string, bytes: number): number {
  const lines = Math.floor(bytes / 80);
  const fd = fs.openSync(file, "w");
  try {
    const chunk: string[] = [];
    for (let i = 1; i <= lines; i++) {
      chunk.push(
        `${String(i).padStart(10, "0")} ${"the quick brown fox jumps over the lazy dog ".repeat(2).slice(0, 68)}\n`,
      );
      if (chunk.length === 100_000 || i === lines) {
        fs.writeSync(fd, chunk.join(""));
        chunk.length = 0;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return lines;
}

const ms = (v: number) => v.toFixed(2);
const pct = (share: number) => `${(share * 100).toFixed(1)} %`;
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
const verdict = (value: number, target: number) => (value <= target ? "met" : "**not met**");

export async function runLargeBench(): Promise<BenchResult> {
  const projectDir = makeBenchDir("large");
  const small = path.join(projectDir, "small.txt");
  fs.writeFileSync(small, "a small file read by another session\n".repeat(55));
  writeLog(path.join(projectDir, "quarter.log"), 256 * KiB);
  const sixteen = writeLog(path.join(projectDir, "sixteen.log"), 16 * MiB);
  const huge = writeLog(path.join(projectDir, "huge.log"), 256 * MiB);
  writeLog(path.join(projectDir, "ten.log"), 10 * 1000 * 1000);
  giveToAgent(projectDir);
  const stateDir = makeBenchDir("large-state");
  const { child, urls } = spawnServer(stateDir, {});
  const floor = await startFloorServer(Buffer.alloc(PAGE, "x"), "application/json; charset=utf-8");
  let pageFloor: Awaited<ReturnType<typeof startFloorServer>> | undefined;
  const load = os.loadavg();
  try {
    const { control } = await urls;
    const api = createControlPost(control);
    const project = await api("/api/projects", {
      name: "bench",
      root: projectDir,
      permissions: { write: true, terminal: false },
    });
    const basesOf = async () => {
      const session = await api("/api/sessions", { projectId: project.id });
      return ((await (await fetch(session.initUrl!)).json()) as { bases: { r: string; m: string } }).bases;
    };
    const pager = await basesOf();
    const other = await basesOf();
    const pageUrl = (file: string, offset: number) =>
      url(pager.r, "r", [
        ["path", file],
        ["offset", offset],
        ["max", PAGE],
      ]);
    const page = (file: string, offset: number) => () => getJson(pageUrl(file, offset));
    await sleep(SETTLE_MS);
    // Each large file's index is built by its first read (not timed here: the cost of a first read is its scan).
    const firstRead = async (file: string, offset: number) => {
      const start = performance.now();
      await page(file, offset)();
      return performance.now() - start;
    };
    const firstSixteen = await firstRead("sixteen.log", Math.floor(sixteen / 2));
    const firstHuge = await firstRead("huge.log", huge - 1000);

    // 1. One 128 KiB page: mid 16 MiB and near the end of 256 MiB, against the same from a 256 KiB file.
    const [fromQuarter, midSixteen, endHuge] = await interleaved(PAGE_RUNS, [
      page("quarter.log", 1),
      page("sixteen.log", Math.floor(sixteen / 2)),
      page("huge.log", huge - 1700),
    ]);

    // 2. 16 MiB read through by next URLs, against as many bare HTTP round trips of 128 KiB.
    const through: number[] = [];
    const bare: number[] = [];
    const bareJson: number[] = [];
    const pageBytes = Buffer.from(await (await fetch(pageUrl("sixteen.log", Math.floor(sixteen / 2)))).arrayBuffer());
    pageFloor = await startFloorServer(pageBytes, "application/json; charset=utf-8");
    let pages = 0;
    for (let run = 0; run < THROUGH_RUNS; run++) {
      let start = performance.now();
      let body = await page("sixteen.log", 1)();
      pages = 1;
      while (typeof body.next === "string") {
        body = await getJson(body.next);
        pages++;
      }
      through.push(performance.now() - start);
      start = performance.now();
      for (let i = 0; i < pages; i++) await (await fetch(floor.url)).arrayBuffer();
      bare.push(performance.now() - start);
      // The same round trips answering one of our pages' own bytes, which the client parses as it parses ours.
      start = performance.now();
      for (let i = 0; i < pages; i++) await (await fetch(pageFloor.url)).json();
      bareJson.push(performance.now() - start);
    }

    // 3. Head of line: another session's 2 KiB read alone, then while one session pages 16 MiB and edits 10 MB.
    const hol = await measureHeadOfLine(pager, other.r, child.pid);
    const { alone, beside } = hol;

    const throughStats = statsOf(through);
    const bareStats = statsOf(bare);
    const bareJsonStats = statsOf(bareJson);
    const rows = [
      [
        "128 KiB page mid 16 MiB ÷ from 256 KiB (p50)",
        `${ms(midSixteen!.p50)} / ${ms(fromQuarter!.p50)} ms`,
        ratio(midSixteen!.p50, fromQuarter!.p50),
        `≤ ${TARGETS.midPage}×`,
        verdict(midSixteen!.p50 / fromQuarter!.p50, TARGETS.midPage),
      ],
      [
        "128 KiB page near the end of 256 MiB ÷ from 256 KiB (p50)",
        `${ms(endHuge!.p50)} / ${ms(fromQuarter!.p50)} ms`,
        ratio(endHuge!.p50, fromQuarter!.p50),
        `≤ ${TARGETS.endPage}×`,
        verdict(endHuge!.p50 / fromQuarter!.p50, TARGETS.endPage),
      ],
      [
        `16 MiB read through (${pages} pages of 128 KiB) ÷ ${pages} bare HTTP GETs of 128 KiB (median of ${THROUGH_RUNS})`,
        `${ms(throughStats.p50)} / ${ms(bareStats.p50)} ms`,
        ratio(throughStats.p50, bareStats.p50),
        `≤ ${TARGETS.readThrough}×`,
        verdict(throughStats.p50 / bareStats.p50, TARGETS.readThrough),
      ],
      [
        `the same ÷ ${pages} bare HTTP GETs of one of our pages' own bytes (${pageBytes.length} B), both parsed as JSON by the client`,
        `${ms(throughStats.p50)} / ${ms(bareJsonStats.p50)} ms`,
        ratio(throughStats.p50, bareJsonStats.p50),
        `≤ ${TARGETS.readThrough}×`,
        verdict(throughStats.p50 / bareJsonStats.p50, TARGETS.readThrough),
      ],
      [
        `another session's 2 KiB /r p50 beside ${hol.pages} pages + ${hol.edits} edits of 10 MB ÷ alone`,
        `${ms(beside.p50)} / ${ms(alone.p50)} ms`,
        ratio(beside.p50, alone.p50),
        `≤ ${TARGETS.holP50}×`,
        verdict(beside.p50 / alone.p50, TARGETS.holP50),
      ],
      [
        "the same, p99",
        `${ms(beside.p99)} / ${ms(alone.p99)} ms`,
        ratio(beside.p99, alone.p99),
        `≤ ${TARGETS.holP99}×`,
        verdict(beside.p99 / alone.p99, TARGETS.holP99),
      ],
    ];
    const markdown = [
      `Run ${new Date().toISOString().slice(0, 16)}Z, load average ${load.map((l) => l.toFixed(2)).join(" ")} at the start,`,
      `${os.loadavg()[0]!.toFixed(2)} at the end. Client: Node's fetch (keep-alive), one call at a time per session, an`,
      `untimed ${GAP_MS} ms gap after each timed call; ${PAGE_RUNS} pages of each size in turns. First read (the index`,
      `scan, not in the table): 16 MiB ${ms(firstSixteen)} ms, 256 MiB ${ms(firstHuge)} ms. Each 10 MB edit writes a new`,
      "version of the file (before 2026-12-07 15:00 the edits alternated two versions, which the review record now stores once).",
      `Head of line: the heavy session (pages of 16 MiB and 10 MB edits at once, one call at a time each) runs in its own`,
      `client process (large-heavy.mjs), as another agent would, so the timed reads' client parses none of its pages;`,
      `the other session's ${HOL_READS} reads of 2 KiB, each followed by ${HOL_GAP_MS} ms, are timed alone and then beside it (before`,
      "2026-12-07 19:00 the heavy session ran in the timing client's own process).",
      hol.waitedForCore
        ? `The bridge's event loop was runnable but waiting for a core ${pct(hol.waitedForCore.alone)} of the time alone and ${pct(hol.waitedForCore.beside)} beside (/proc schedstat: the machine's load).`
        : "",
      "",
      "| scenario | ours / floor | ratio | target | verdict |",
      "|---|---|---|---|---|",
      ...rows.map((r) => `| ${r.join(" | ")} |`),
    ].join("\n");
    return {
      suite: "large",
      markdown,
      figures: { fromQuarter: fromQuarter!, midSixteen: midSixteen!, endHuge: endHuge!, alone, beside },
    };
  } finally {
    await floor.close();
    await pageFloor?.close();
    await stopChild(child);
    fs.rmSync(stateDir, { recursive: true, force: true });
    fs.rmSync(projectDir, { recursive: true, force: true });
  }
}
