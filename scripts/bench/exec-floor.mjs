// The /x and /g benchmarks' floor, in its own process like the bridge and padded to the bridge's resident size
// (fork copies the parent's page tables, so a spawn costs more from a bigger process): a GET spawns
// `/bin/sh -c 'echo hi'` with piped output and answers {stdout, spawnMs}, spawnMs timed around the spawn alone;
// a GET of /rg?cwd=<dir>&pattern=<text> runs plain `rg -F <text> .` there and answers {lines}.
// Usage: node scripts/bench/exec-floor.mjs <resident MiB to reach>   (prints its URL)
import { spawn } from "node:child_process";
import http from "node:http";

const targetMiB = Number(process.argv[2] ?? 0);
const padMiB = Math.max(0, targetMiB - Math.round(process.memoryUsage().rss / 1048576));
// Touched pages (fill), so they are resident and their page tables real, as the bridge's heap is.
const pad = Buffer.alloc(padMiB * 1048576, 1);

function spawnEcho() {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn("/bin/sh", ["-c", "echo hi"], { stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let pending = 3;
    const finish = () => --pending === 0 && resolve({ stdout, spawnMs: performance.now() - started });
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stdout.on("close", finish);
    child.stderr.on("close", finish);
    child.on("exit", finish);
  });
}

/** Plain multi-threaded rg, default output; resolves with the number of lines it printed. */
function runRg(cwd, pattern) {
  return new Promise((resolve, reject) => {
    const child = spawn("rg", ["--no-config", "-F", pattern, "."], { cwd, stdio: ["ignore", "pipe", "ignore"] });
    let lines = 0;
    child.stdout.on("data", (chunk) => {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    });
    child.on("error", reject);
    child.on("close", () => resolve({ lines }));
  });
}

const server = http.createServer(async (req, res) => {
  const query = new URL(req.url, "http://floor").searchParams;
  const answer = query.has("cwd") ? await runRg(query.get("cwd"), query.get("pattern")) : await spawnEcho();
  const body = JSON.stringify({ ok: true, ...answer, padBytes: pad.length });
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${server.address().port}/\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
