// Where the large-file work spends the bridge's event loop: runs the built server with --cpu-prof and either edits a
// 10 MB file `n` times (each a new version; one call at a time, the bench's 20 ms gap after each) or reads a 16 MiB file through by
// 128 KiB pages `n` times; prints the heaviest functions by self time and the loop's longest holds. Not a suite of
// `npm run bench`: a tool for finding the next cut.
//   npx tsx scripts/bench/large-profile.ts <edits|through|both> [n]   (both: paging 16 MiB while editing n times)   (TOP=n rows, NOPROF=1: no profiler, KEEP=file,
//   GC=1: the bridge's main-thread garbage collections by kind and its peak ArrayBuffer memory, large-gc-observer.cjs)
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { createControlPost, giveToAgent, makeBenchDir, spawnServer } from "./bridge.js";
import { loopHolds, summariseProfile } from "./cpu-profile.js";
import { stopChild } from "./http.js";
import { getJson, url, writeLog } from "./large.js";

const MODES = ["edits", "through", "both"] as const;
type Mode = (typeof MODES)[number];
const TOP = Number(process.env.TOP ?? 30);
const GAP_MS = 20;
const PAGE = 128 * 1024;
const GC_OBSERVER = fileURLToPath(new URL("large-gc-observer.cjs", import.meta.url));
const INCLUSIVE = ["record", "sealAhead", "writeFileDurably", "fillTempFile", "commitSingleFile", "readPage"];

/** Edits ten.log `n` times, each a new version (none already in the review record), `gapMs` after each. */
async function editTen(base: string, n: number, gapMs: number): Promise<void> {
  let current = "0000000001";
  for (let i = 0; i < n; i++) {
    const next = `E${String(i).padStart(9, "0")}`;
    await getJson(
      url(
        base,
        "e",
        [
          ["path", "ten.log"],
          ["old", current],
          ["run", i],
        ],
        next,
      ),
    );
    current = next;
    if (gapMs > 0) await sleep(gapMs);
  }
}

async function main(): Promise<void> {
  const mode = process.argv[2] as Mode;
  if (!MODES.includes(mode)) throw new Error(`mode must be one of ${MODES.join(", ")}`);
  const n = Number(process.argv[3] ?? (mode === "edits" ? 20 : 5));
  const projectDir = makeBenchDir("large-profile-project");
  writeLog(path.join(projectDir, "ten.log"), 10 * 1000 * 1000);
  writeLog(path.join(projectDir, "sixteen.log"), 16 * 1024 * 1024);
  giveToAgent(projectDir);
  const stateDir = makeBenchDir("large-profile-state");
  const profDir = makeBenchDir("large-profile-cpu");
  const gcLog = process.env.GC ? path.join(profDir, "gc.json") : undefined;
  const { child, urls } = spawnServer(stateDir, gcLog ? { LARGE_GC_LOG: gcLog } : {}, [
    ...(process.env.NOPROF ? [] : ["--cpu-prof", `--cpu-prof-dir=${profDir}`]),
    ...(gcLog ? ["--require", GC_OBSERVER] : []),
  ]);
  try {
    const { control } = await urls;
    const api = createControlPost(control);
    const project = await api("/api/projects", {
      name: "profile",
      root: projectDir,
      permissions: { write: true, terminal: false },
    });
    const session = await api("/api/sessions", { projectId: project.id });
    const { bases } = (await (await fetch(session.initUrl!)).json()) as { bases: { r: string; m: string } };
    await sleep(2500);
    const started = performance.now();
    if (mode === "both") {
      // The head-of-line bench's load without its measured reads: one session pages 16 MiB while it edits 10 MB.
      let busy = true;
      const pager = (async () => {
        let body: Record<string, unknown> = {
          next: url(bases.r, "r", [
            ["path", "sixteen.log"],
            ["offset", 1],
            ["max", PAGE],
          ]),
        };
        while (busy)
          body = await getJson(
            typeof body.next === "string"
              ? body.next
              : url(bases.r, "r", [
                  ["path", "sixteen.log"],
                  ["offset", 1],
                  ["max", PAGE],
                ]),
          );
      })();
      await editTen(bases.m, n, 0);
      busy = false;
      await pager;
    } else if (mode === "edits") {
      await editTen(bases.m, n, GAP_MS);
    } else {
      for (let i = 0; i < n; i++) {
        let body = await getJson(
          url(bases.r, "r", [
            ["path", "sixteen.log"],
            ["offset", 1],
            ["max", PAGE],
          ]),
        );
        while (typeof body.next === "string") body = await getJson(body.next);
      }
    }
    const elapsed = performance.now() - started;
    process.stdout.write(`${mode}: ${n} in ${elapsed.toFixed(0)} ms (client included, gaps included)\n`);
  } finally {
    await stopChild(child);
    if (gcLog && fs.existsSync(gcLog)) process.stdout.write(`main-thread GC: ${fs.readFileSync(gcLog, "utf8")}\n`);
    const file = fs.readdirSync(profDir).find((name) => name.endsWith(".cpuprofile"));
    if (file && process.env.KEEP) fs.copyFileSync(path.join(profDir, file), process.env.KEEP);
    if (file) {
      const holds = loopHolds(path.join(profDir, file));
      const over = (ms: number) => holds.filter((h) => h >= ms).length;
      process.stdout.write(
        `loop holds: longest ${holds
          .slice(0, 8)
          .map((h) => h.toFixed(1))
          .join(", ")} ms; ≥ 5 ms: ${over(5)}, ≥ 10 ms: ${over(10)}, ≥ 20 ms: ${over(20)}\n`,
      );
      process.stdout.write(`${summariseProfile(path.join(profDir, file), INCLUSIVE, TOP)}\n`);
    } else process.stdout.write("no profile was written (the server did not exit cleanly)\n");
    for (const dir of [stateDir, projectDir, profDir]) fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
