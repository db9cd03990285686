// Writes the built server's V8 code cache (server/code-cache.ts) from a short real run, so that it holds what a start
// and an agent's first calls compile, not only what loading the bundle compiles (issue 34): starts
// dist/server/main.js on a fresh state dir and free ports, waits for /api/health, makes a read-only project and a
// session, reads a file through /r, and stops it; the server writes the cache as it exits. `npm run build:server`
// and the image's runtime stage (its root filesystem is read-only at run time) run it. Only the start must succeed:
// a call after it that fails (say, a project folder the build's user may not use) leaves a smaller cache, said on
// stderr. Exits non-zero when no cache of the bridge chunk was written.
//   node scripts/train-code-cache.mjs [dist/server]
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const serverDir = path.resolve(process.argv[2] ?? fileURLToPath(new URL("../dist/server", import.meta.url)));
const cacheDir = path.join(serverDir, ".v8-cache", `${process.version}-${process.arch}`);
const TOKEN = "code-cache-training-operator-token-0123456789";
const START_TIMEOUT_MS = 60_000;
const LISTEN_LINE = /(control|data) plane on (http:\/\/\S+)/;

const work = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-code-cache-"));
const stateDir = path.join(work, "state");
const projectDir = path.join(work, "project");
fs.mkdirSync(projectDir, { mode: 0o755 });
fs.writeFileSync(path.join(projectDir, "small.txt"), `${"x".repeat(63)}\n`.repeat(32), { mode: 0o644 });
// Written by this run alone: an older cache V8 accepts would otherwise be kept as it is.
fs.rmSync(cacheDir, { recursive: true, force: true });

const child = spawn(process.execPath, [path.join(serverDir, "main.js")], {
  env: {
    ...process.env,
    URLBRIDGE_STATE_DIR: stateDir,
    URLBRIDGE_CONTROL_HOST: "127.0.0.1",
    URLBRIDGE_DATA_HOST: "127.0.0.1",
    URLBRIDGE_CONTROL_PORT: "0",
    URLBRIDGE_DATA_PORT: "0",
    URLBRIDGE_OPERATOR_TOKEN: TOKEN,
    URLBRIDGE_LOG_LEVEL: "info",
    URLBRIDGE_CODE_CACHE: "1",
  },
  stdio: ["ignore", "ignore", "pipe"],
});
const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));

/** The two planes' URLs from the bridge's start-up lines. */
function listening() {
  return new Promise((resolve, reject) => {
    const found = {};
    let text = "";
    const timer = setTimeout(
      () => reject(new Error(`no start within ${START_TIMEOUT_MS} ms:\n${text}`)),
      START_TIMEOUT_MS,
    );
    child.stderr.on("data", (chunk) => {
      text += chunk.toString("utf8");
      for (const line of text.split("\n")) {
        const m = LISTEN_LINE.exec(line);
        if (m) found[m[1]] = m[2];
      }
      if (found.control && found.data) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    void exited.then((code) => reject(new Error(`the bridge exited (${code}) before it listened:\n${text}`)));
  });
}

async function post(control, route, body) {
  const res = await fetch(`${control}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`${route} answered ${res.status}: ${await res.text()}`);
  return await res.json();
}

/** What an operator and an agent do first: health, a project and a session, the session's Init, one read. */
async function firstCalls(control) {
  const health = await fetch(`${control}/api/health`);
  if (health.status !== 200) throw new Error(`/api/health answered ${health.status}`);
  await health.text();
  try {
    const project = await post(control, "/api/projects", {
      name: "code-cache",
      root: projectDir,
      permissions: { write: false, terminal: false },
    });
    const session = await post(control, "/api/sessions", { projectId: project.id });
    const { bases } = await (await fetch(session.initUrl)).json();
    const read = await (await fetch(`${bases.r}/r?path=small.txt`)).text();
    if (!read.includes('"ok":true')) throw new Error(`/r answered ${read.slice(0, 200)}`);
  } catch (error) {
    process.stderr.write(`train-code-cache: the first calls failed, the cache holds start-up only: ${error.message}\n`);
  }
}

try {
  const { control } = await listening();
  await firstCalls(control);
} finally {
  child.kill("SIGTERM");
  await exited;
  fs.rmSync(work, { recursive: true, force: true });
}
const written = fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir).filter((name) => name.endsWith(".bin")) : [];
if (!written.some((name) => name.startsWith("bridge-"))) {
  process.stderr.write(`train-code-cache: no cache of the bridge chunk in ${cacheDir}\n`);
  process.exit(1);
}
