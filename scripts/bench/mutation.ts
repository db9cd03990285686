// Mutation benchmarks, each against a floor measured in the same run: a journaled /e of a 2 KiB file against a
// durable edit done in this process (temp file, fsync, rename, directory fsync) and against the reference MCP
// filesystem server's (non-durable) edit_file; /r latency alone and while another session's mutations run;
// and the journal's other routes (/w new and replayed, a 50-file /a, /x) against a /t stat GET. Latency is timed as a
// client calls (harness.ts measureAsClient): Node's global fetch, one call at a time, an untimed gap after each.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { encodeQueryValue, encodeUrlText } from "../../server/url-grammar/encode.js";
import { createControlPost, makeBenchDir, spawnServer } from "./bridge.js";
import { writeFlipFile } from "./flip-file.js";
import {
  CLIENT_GAP_MS,
  describeClientMethod,
  measureAsClient,
  measureCpuInterleaved,
  sampleAsClient,
  statsOf,
  type BenchResult,
  type Stats,
} from "./harness.js";
import { createBenchClient, FETCH_CLIENT, fetchBody, startEditFloorServer, stopChild } from "./http.js";
import { startFilesystemServer } from "./mcp-filesystem.js";

const WARMUP = 20;
const EDIT_RUNS = 200;
const READ_ROUNDS = 5;
const READ_RUNS_PER_ROUND = 100;
/** /t, /w new, /w replayed and /x, in turns. */
const ROUTE_RUNS = 150;
const PATCH_RUNS = 20;
const PATCH_FILES = 50;
const FILE_BYTES = 2048;
const CPU_ROUNDS = 10;
const CPU_BLOCK = 50;
/** Targets from issue 18, p50 ratios. */
const EDIT_VS_FLOOR_TARGET = 1.5;
const EDIT_VS_FILESYSTEM_TARGET = 1.3;

type Body = Record<string, unknown>;

function url(base: string, route: string, params: Array<[string, string | number]>, raw?: string): string {
  const parts = params.map(([k, v]) => `${k}=${encodeQueryValue(String(v))}`);
  if (raw !== undefined) parts.push(`raw=${encodeUrlText(raw)}`);
  return `${base}/${route}?${parts.join("&")}`;
}

function okBody(text: string): Body {
  const body = JSON.parse(text) as Body;
  if (body.ok !== true) throw new Error(`bench request failed: ${text.slice(0, 300)}`);
  return body;
}

function flipper(edit: (from: string, to: string, n: number) => Promise<unknown> | unknown): () => Promise<void> {
  let current = "A";
  let n = 0;
  return async () => {
    const next = current === "A" ? "B" : "A";
    await edit(`value ${current}`, `value ${next}`, n++);
    current = next;
  };
}

/** The least a durable edit can cost: read, replace, temp file, write, fsync, rename, directory fsync. */
function durableEditFloor(file: string): (from: string, to: string) => void {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.floor-tmp`);
  return (from, to) => {
    const text = fs.readFileSync(file, "utf8");
    const fd = fs.openSync(temp, "wx", 0o644);
    try {
      fs.writeSync(fd, text.replace(from, to));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, file);
    const dirFd = fs.openSync(dir, "r");
    try {
      fs.fsyncSync(dirFd);
    } finally {
      fs.closeSync(dirFd);
    }
  };
}

export async function runMutationBench(): Promise<BenchResult> {
  const projectDir = makeBenchDir("project");
  fs.writeFileSync(path.join(projectDir, "floor.txt"), "floor\n");
  for (const name of [
    "edit.txt",
    "edit-cpu.txt",
    "edit-fetch.txt",
    "edit-fs.txt",
    "edit-floor.txt",
    "edit-http.txt",
    "edit-http-log.txt",
    "edit-http-sync.txt",
    "edit-other.txt",
    "read.txt",
  ])
    writeFlipFile(path.join(projectDir, name), FILE_BYTES);
  for (let i = 0; i < PATCH_FILES; i++) fs.writeFileSync(path.join(projectDir, `p${i}.txt`), `file ${i}\nvalue 0\n`);
  // As root the sandboxed terminal runs as the project's owner (uid 1000 for a root-owned folder): give it the folder.
  if (process.getuid?.() === 0)
    for (const name of [".", ...fs.readdirSync(projectDir)]) fs.chownSync(path.join(projectDir, name), 1000, 1000);

  const stateDir = makeBenchDir("state");
  const { child, urls } = spawnServer(stateDir, {});
  // The second client of the /e rows: a keep-alive node:http agent (createBenchClient), beside the primary fetch.
  const client = createBenchClient(1);
  const load = os.loadavg();
  const filesystem = await startFilesystemServer(projectDir);
  // Where the /e-vs-floor target sits: the in-process floor behind a bare node:http GET, with and without a journal's fsync.
  const httpFloor = await startEditFloorServer(path.join(projectDir, "edit-http.txt"), "plain");
  const journaledFloor = await startEditFloorServer(path.join(projectDir, "edit-http-log.txt"), "journaled");
  const syncFloor = await startEditFloorServer(path.join(projectDir, "edit-http-sync.txt"), "sync");
  try {
    const { control } = await urls;
    const api = createControlPost(control);
    const project = await api("/api/projects", {
      name: "bench",
      root: projectDir,
      permissions: { write: true, terminal: true },
    });
    const basesOf = async () => {
      const session = await api("/api/sessions", { projectId: project.id });
      return ((await (await fetch(session.initUrl!)).json()) as { bases: { r: string; m: string } }).bases;
    };
    const bases = await basesOf();
    const other = await basesOf();
    const get = async (target: string) => okBody((await fetchBody(target)).toString("utf8"));
    const getNodeHttp = async (target: string) => okBody((await client.get(target)).toString("utf8"));

    // 1. A journaled /e against the durable-edit floor and the filesystem server's edit_file, in turns.
    const editUrl = (base: string, file: string, from: string, to: string, n: number) =>
      url(
        base,
        "e",
        [
          ["path", file],
          ["old", from],
          ["run", n],
        ],
        to,
      );
    const editGet = (base: string, file: string) => (from: string, to: string, n: number) =>
      get(editUrl(base, file, from, to, n));
    const editNodeHttp = (from: string, to: string, n: number) =>
      getNodeHttp(editUrl(bases.m, "edit.txt", from, to, n));
    const fsFile = path.join(projectDir, "edit-fs.txt");
    const floorGet = (base: string) => (from: string, to: string) =>
      fetchBody(`${base}?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
    const editOrder = [
      "the in-process durable-edit floor",
      "/e by fetch",
      "the filesystem server's edit_file",
      "/e by node:http",
      "the three node:http edit floors (event-loop fsyncs, thread-pool fsyncs, with a journal record)",
    ];
    const [floorEdit, editViaFetch, fsEdit, edit, syncFloorEdit, httpFloorEdit, journaledFloorEdit] =
      (await measureAsClient(EDIT_RUNS, WARMUP, [
        flipper(durableEditFloor(path.join(projectDir, "edit-floor.txt"))),
        flipper(editGet(bases.m, "edit-fetch.txt")),
        flipper((from, to) => filesystem.call("edit_file", { path: fsFile, edits: [{ oldText: from, newText: to }] })),
        flipper(editNodeHttp),
        flipper(floorGet(syncFloor.url)),
        flipper(floorGet(httpFloor.url)),
        flipper(floorGet(journaledFloor.url)),
      ])) as [Stats, Stats, Stats, Stats, Stats, Stats, Stats];

    // The bridge's main-thread (event loop) CPU per /e, and per /r for scale: what every other call waits behind.
    const readOnce = () => get(url(bases.r, "r", [["path", "read.txt"]]));
    const [editCpu, readCpu] = await measureCpuInterleaved(CPU_ROUNDS, CPU_BLOCK, [
      { pid: child.pid!, fn: flipper(editGet(bases.m, "edit-cpu.txt")) },
      { pid: child.pid!, fn: readOnce },
    ]);

    // 2. /r of a 2 KiB file alone, and while another session edits back to back (a load, not a client), in
    // alternating rounds; the reads are timed as a client calls.
    const alone: number[] = [];
    const during: number[] = [];
    let mutationsDuring = 0;
    const otherEdit = flipper(editGet(other.m, "edit-other.txt"));
    for (let round = 0; round < READ_ROUNDS; round++) {
      alone.push(...(await sampleAsClient(READ_RUNS_PER_ROUND, round === 0 ? WARMUP : 0, [readOnce]))[0]!);
      let stop = false;
      const loop = (async () => {
        while (!stop) {
          await otherEdit();
          mutationsDuring++;
        }
      })();
      during.push(...(await sampleAsClient(READ_RUNS_PER_ROUND, 0, [readOnce]))[0]!);
      stop = true;
      await loop;
    }
    const readAlone = statsOf(alone);
    const readDuring = statsOf(during);

    // 3. The journal's other routes against a /t stat GET of the same bridge, in turns; the 50-file patch apart.
    let n = 0;
    const replayUrl = url(bases.m, "w", [["path", "new/replayed.txt"]], "hello\n");
    await get(replayUrl);
    let x = 0;
    const [floor, fresh, replayed, terminal] = (await measureAsClient(ROUTE_RUNS, WARMUP, [
      () => get(url(bases.r, "t", [["path", "floor.txt"]])),
      () => get(url(bases.m, "w", [["path", `new/f${n++}.txt`]], "hello\n")),
      () => get(replayUrl),
      () => get(url(bases.m, "x", [["run", x++]], "echo hi")),
    ])) as [Stats, Stats, Stats, Stats];
    let round = 0;
    const [patch] = (await measureAsClient(PATCH_RUNS, 2, [
      async () => {
        const from = round++;
        const lines = ["*** Begin Patch"];
        for (let i = 0; i < PATCH_FILES; i++)
          lines.push(`*** Update File: p${i}.txt`, "@@", ` file ${i}`, `-value ${from}`, `+value ${from + 1}`);
        lines.push("*** End Patch");
        const body = await get(url(bases.m, "a", [["wait", 1500]], lines.join("\n")));
        if (body.state !== "succeeded")
          throw new Error(`patch did not finish within wait: ${JSON.stringify(body).slice(0, 200)}`);
      },
    ])) as [Stats];

    const ms = (s: Stats) => `${s.p50.toFixed(2)} | ${s.p99.toFixed(2)}`;
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    const verdict = (value: number, target: number) =>
      value <= target ? `≤ ${target}× met` : `≤ ${target}× **missed**`;
    const editRatio = editViaFetch.p50 / floorEdit.p50;
    const fsRatio = editViaFetch.p50 / fsEdit.p50;
    const cpu = (us: number | undefined) => (us === undefined ? "n/a" : us.toFixed(0));
    const row = (name: string, s: Stats) => `| ${name} | ${ms(s)} | ${ratio(s.p50, floor.p50)} |`;
    return {
      suite: "mutation",
      markdown: [
        "### Mutation journal",
        "",
        `Measured ${new Date().toISOString().slice(0, 16)}Z on ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? "unknown CPU"}, Node ${process.version};`,
        `load average ${load.map((l) => l.toFixed(2)).join(" ")} at the start, ${os.loadavg()[0]!.toFixed(2)} at the end.`,
        "The built server in its own process, a real SQLite state file and real files on the same disk; every journaled",
        "mutation makes its admission, its outcome and its file durable before it answers. The durable-edit floor runs in",
        "the bench process itself (read, replace, temp file, write, fsync, rename, directory fsync); the filesystem server",
        "is @modelcontextprotocol/server-filesystem over stdio through the official SDK client (it does not fsync).",
        describeClientMethod({
          client: `${FETCH_CLIENT}; the second /e row through a keep-alive node:http agent instead`,
          order: editOrder.join(", "),
          runs: EDIT_RUNS,
          warmup: WARMUP,
        }),
        "The targets are read in this method, with fetch.",
        "",
        "| measurement | p50 ms | p99 ms | p50 ratio | target |",
        "|---|---|---|---|---|",
        `| durable-edit floor, 2 KiB file, in process | ${ms(floorEdit)} | 1.00× | |`,
        `| journaled /e of a 2 KiB file, fetch | ${ms(editViaFetch)} | ${ratio(editViaFetch.p50, floorEdit.p50)} vs floor | ${verdict(editRatio, EDIT_VS_FLOOR_TARGET)} |`,
        `| filesystem server \`edit_file\`, stdio, SDK client | ${ms(fsEdit)} | 1.00× | |`,
        `| journaled /e of a 2 KiB file, fetch (the row above) | ${ms(editViaFetch)} | ${ratio(editViaFetch.p50, fsEdit.p50)} vs filesystem | ${verdict(fsRatio, EDIT_VS_FILESYSTEM_TARGET)} |`,
        `| the same /e through a keep-alive node:http agent | ${ms(edit)} | ${ratio(edit.p50, fsEdit.p50)} vs filesystem | ${verdict(edit.p50 / fsEdit.p50, EDIT_VS_FILESYSTEM_TARGET)} |`,
        "",
        "Where the floor target sits: the same durable edit behind a GET (fetch) to a bare node:http server in its own",
        "process (no routing, validation or database), with its fsyncs on the event loop as the floor's are (so every other",
        "request would wait behind them), in the thread pool as issue 18 has the bridge do them, and the latter with one",
        "record appended to a log file and fsynced beside the temp file's before the rename (the least a write-ahead",
        "journal adds), in the same turns:",
        "",
        "| measurement | p50 ms | p99 ms | p50 vs floor |",
        "|---|---|---|---|",
        `| bare node:http doing the durable edit per GET, fsyncs on the event loop | ${ms(syncFloorEdit)} | ${ratio(syncFloorEdit.p50, floorEdit.p50)} |`,
        `| the same, fsyncs in the thread pool | ${ms(httpFloorEdit)} | ${ratio(httpFloorEdit.p50, floorEdit.p50)} |`,
        `| the same with a journal record fsynced beside the temp file | ${ms(journaledFloorEdit)} | ${ratio(journaledFloorEdit.p50, floorEdit.p50)} |`,
        `| journaled /e, fetch (as above) | ${ms(editViaFetch)} | ${ratio(editViaFetch.p50, floorEdit.p50)} |`,
        "",
        `The bridge's event-loop CPU per call (/proc schedstat of its main thread, ${CPU_ROUNDS} rounds of ${CPU_BLOCK} calls each back to back, in turns; CPU time, not latency, so no gap): /e ${cpu(editCpu)} µs, /r of a 2 KiB file ${cpu(readCpu)} µs.`,
        "",
        `/r of a 2 KiB file alone and while a second session runs /e back to back (${READ_ROUNDS} alternating rounds of ${READ_RUNS_PER_ROUND} reads,`,
        `timed as above with the ${CLIENT_GAP_MS} ms gap after each read; the other session's edits are a load with no gap; ${mutationsDuring} edits landed during the reads):`,
        "",
        "| measurement | p50 ms | p99 ms | p99 ratio |",
        "|---|---|---|---|",
        `| /r alone (n=${readAlone.n}) | ${ms(readAlone)} | 1.00× |`,
        `| /r during another session's mutations (n=${readDuring.n}) | ${ms(readDuring)} | ${ratio(readDuring.p99, readAlone.p99)} |`,
        "",
        `The journal's other routes, against a /t stat GET of the same bridge (p50 ${floor.p50.toFixed(2)} ms), timed as above: /t, /w new,`,
        `/w replayed and /x in turns (${ROUTE_RUNS} each after ${WARMUP} warm-up rounds), the ${PATCH_FILES}-file patch on its own (${PATCH_RUNS} after 2):`,
        "",
        "| measurement | p50 ms | p99 ms | p50 vs /t |",
        "|---|---|---|---|",
        row(`/t stat GET (floor, n=${floor.n})`, floor),
        row(`/w new intent GET round trip (n=${fresh.n})`, fresh),
        row(`/w replayed GET, dedupe (n=${replayed.n})`, replayed),
        row(`/a apply_patch of ${PATCH_FILES} files (n=${patch.n})`, patch),
        row(`/x foreground \`echo hi\` (n=${terminal.n})`, terminal),
      ].join("\n"),
      figures: {
        floorEdit,
        edit,
        editViaFetch,
        fsEdit,
        httpFloorEdit,
        journaledFloorEdit,
        syncFloorEdit,
        readAlone,
        readDuring,
        floor,
        newIntent: fresh,
        replayed,
        patch50: patch,
        terminal,
      },
    };
  } finally {
    client.close();
    await filesystem.close();
    await httpFloor.close();
    await journaledFloor.close();
    await syncFloor.close();
    await stopChild(child);
    fs.rmSync(stateDir, { recursive: true, force: true });
    fs.rmSync(projectDir, { recursive: true, force: true });
  }
}
