// Mutation benchmarks: a new-intent GET round trip, a replayed (deduplicated) GET and a 50-file apply_patch,
// each against a read GET of the same bridge in the same run as its floor.
import fs from "node:fs";
import path from "node:path";
import { encodeQueryValue, encodeUrlText } from "../../server/url-grammar/encode.js";
import { makeBenchDir, startBenchBridge } from "./bridge.js";
import { measure, type BenchResult, type Stats } from "./harness.js";

const WARMUP = 20;
const FLOOR_RUNS = 300;
const NEW_INTENT_RUNS = 200;
const REPLAY_RUNS = 300;
const PATCH_RUNS = 20;
const PATCH_FILES = 50;
const TERMINAL_RUNS = 100;

function url(base: string, route: string, params: Array<[string, string | number]>, raw?: string): string {
  const parts = params.map(([k, v]) => `${k}=${encodeQueryValue(String(v))}`);
  if (raw !== undefined) parts.push(`raw=${encodeUrlText(raw)}`);
  return `${base}/${route}?${parts.join("&")}`;
}

async function getJson(target: string): Promise<Record<string, unknown>> {
  const body = (await (await fetch(target)).json()) as Record<string, unknown>;
  if (body.ok !== true) throw new Error(`bench request failed: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

export async function runMutationBench(): Promise<BenchResult> {
  const projectDir = makeBenchDir("project");
  fs.writeFileSync(path.join(projectDir, "floor.txt"), "floor\n");
  for (let i = 0; i < PATCH_FILES; i++) fs.writeFileSync(path.join(projectDir, `p${i}.txt`), `file ${i}\nvalue 0\n`);
  // As root the sandboxed terminal runs as the project's owner (uid 1000 for a root-owned folder): give it the folder.
  if (process.getuid?.() === 0) for (const name of [".", ...fs.readdirSync(projectDir)]) fs.chownSync(path.join(projectDir, name), 1000, 1000);
  const bridge = await startBenchBridge(projectDir, { permissions: { write: true, terminal: true } });
  try {
    const bases = bridge.bases as { r: string; m: string };

    const floor = await measure(FLOOR_RUNS, WARMUP, () => getJson(url(bases.r, "t", [["path", "floor.txt"]])));
    let n = 0;
    const fresh = await measure(NEW_INTENT_RUNS, WARMUP, () => getJson(url(bases.m, "w", [["path", `new/f${n++}.txt`]], "hello\n")));
    const replayUrl = url(bases.m, "w", [["path", "new/replayed.txt"]], "hello\n");
    await getJson(replayUrl);
    const replayed = await measure(REPLAY_RUNS, WARMUP, () => getJson(replayUrl));
    let round = 0;
    const patch = await measure(PATCH_RUNS, 2, async () => {
      const from = round++;
      const lines = ["*** Begin Patch"];
      for (let i = 0; i < PATCH_FILES; i++) lines.push(`*** Update File: p${i}.txt`, "@@", ` file ${i}`, `-value ${from}`, `+value ${from + 1}`);
      lines.push("*** End Patch");
      const body = await getJson(url(bases.m, "a", [["wait", 1500]], lines.join("\n")));
      if (body.state !== "succeeded") throw new Error(`patch did not finish within wait: ${JSON.stringify(body).slice(0, 200)}`);
    });
    // A foreground command that does nothing: the cost of the spawn (and the sandbox launcher) per /x.
    let x = 0;
    const terminal = await measure(TERMINAL_RUNS, 5, () => getJson(url(bases.m, "x", [["run", x++]], "true")));

    const row = (name: string, s: Stats) =>
      `| ${name} | ${s.p50.toFixed(2)} | ${s.p99.toFixed(2)} | ${(s.p50 / floor.p50).toFixed(1)}× |`;
    return {
      suite: "mutation",
      markdown: [
        "### Mutation journal",
        "",
        `The built server in its own process, real SQLite file (WAL, synchronous=FULL) and real files; every mutation fsyncs its file,`,
        `its directory and the journal. Floor: a /t stat GET on the same bridge (p50 ${floor.p50.toFixed(2)} ms).`,
        "",
        "| measurement | p50 ms | p99 ms | p50 vs floor |",
        "|---|---|---|---|",
        row(`/t stat GET (floor, n=${floor.n})`, floor),
        row(`/w new intent GET round trip (n=${fresh.n})`, fresh),
        row(`/w replayed GET, dedupe (n=${replayed.n})`, replayed),
        row(`/a apply_patch of ${PATCH_FILES} files (n=${patch.n})`, patch),
        row(`/x foreground \`true\` (n=${terminal.n})`, terminal),
      ].join("\n"),
      figures: { floor, newIntent: fresh, replayed, patch50: patch, terminal },
    };
  } finally {
    await bridge.close();
    fs.rmSync(projectDir, { recursive: true, force: true });
  }
}
