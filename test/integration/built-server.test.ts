// The server as shipped (`node dist/server/main.js`, the vite/rolldown bundle of scripts/vite.server.config.ts)
// answers like the source: what the bundle loads on first use instead of at start-up (mime-types' tables, see
// the config; the MCP chunk; typescript for /o through a dynamic import) works on its first call after a start,
// the answers' headers match the source server's, and the V8 code cache (server/code-cache.ts) is written after a
// first start, used by the next, and ignored when it is garbage. Start-up loads no chunk that holds the MCP SDK.
import { spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CODE_CACHE_DIR, CODE_CACHE_WRITE_DELAY_MS } from "../../server/code-cache.js";
import {
  makeTempDir,
  startTestBridge,
  TEST_OPERATOR_TOKEN,
  type TestBridge,
  makeProjectDir,
  writeAsAgent,
} from "../helpers/bridge.js";
import { startServerProcess, type ServerProcess } from "../helpers/server-process.js";

const REPO = path.resolve(import.meta.dirname, "../..");

/** Builds the bundle two levels below the checkout, where it finds the package root and dist/native as dist/server does. */
function buildBundle(): string {
  const root = fs.mkdtempSync(path.join(REPO, ".test-bundle-"));
  const outDir = path.join(root, "server");
  const vite = path.join(REPO, "node_modules", "vite", "bin", "vite.js");
  const built = spawnSync(
    process.execPath,
    [vite, "build", "--config", "scripts/vite.server.config.ts", "--outDir", outDir],
    { cwd: REPO, encoding: "utf8" },
  );
  if (built.status !== 0) throw new Error(`vite build failed:\n${built.stdout}\n${built.stderr}`);
  return root;
}

/** Starts the built entry with plain node, as `npm start` does. */
const startBuilt = (entry: string, stateDir: string): Promise<ServerProcess> =>
  startServerProcess({ stateDir, entry, tsx: false });

/** Status, content type and body of each request, in order, against one server. */
async function answers(base: string, requests: Array<{ path: string; auth?: boolean }>) {
  const out: Array<{ path: string; status: number; type: string | null; body: string }> = [];
  for (const r of requests) {
    const res = await fetch(`${base}${r.path}`, {
      headers: r.auth ? { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` } : {},
    });
    out.push({ path: r.path, status: res.status, type: res.headers.get("content-type"), body: await res.text() });
  }
  return out;
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  return exited;
}

/** The cache files (name -> bytes) under the bundle's .v8-cache, once there are `count` of them; bounded wait. */
async function cacheFiles(serverDir: string, count: number): Promise<Map<string, Buffer>> {
  const dir = path.join(serverDir, CODE_CACHE_DIR, `${process.version}-${process.arch}`);
  const read = () =>
    new Map(
      (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
        .filter((n) => n.endsWith(".bin"))
        .map((n) => [n, fs.readFileSync(path.join(dir, n))] as const),
    );
  for (let i = 0; i < 100; i++) {
    const files = read();
    if (files.size >= count) return files;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return read();
}

async function controlPost(controlUrl: string, route: string, body: unknown): Promise<Record<string, string>> {
  const res = await fetch(`${controlUrl}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Record<string, string>;
}

/** The first /o of a .ts file (typescript loads by dynamic import) and the first MCP POST (the MCP chunk), through one server. */
async function firstLazyCalls(controlUrl: string, projectDir: string) {
  const project = await controlPost(controlUrl, "/api/projects", {
    name: "built",
    root: projectDir,
    permissions: { write: false, terminal: false },
  });
  const session = await controlPost(controlUrl, "/api/sessions", { projectId: project.id });
  const init = (await (await fetch(session.initUrl!)).json()) as { bases: { r: string } };
  const outline = (await (await fetch(`${init.bases.r}/o?path=shapes.ts`)).json()) as Record<string, unknown>;
  const mcp = (await (
    await fetch(`${controlUrl}/api/sessions/${session.id}/mcp`, {
      headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` },
    })
  ).json()) as { pathUrl: string };
  const initialize = await fetch(mcp.pathUrl, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "built", version: "0" } },
    }),
  });
  return { outline, mcpStatus: initialize.status, mcpBody: await initialize.text() };
}

describe("the built server (dist bundle)", () => {
  let bundleRoot: string;
  let child: ChildProcess | undefined;
  let builtUrl: string;
  let source: TestBridge;

  beforeAll(async () => {
    bundleRoot = buildBundle();
    const started = await startBuilt(path.join(bundleRoot, "server", "main.js"), makeTempDir("built-state"));
    child = started.child;
    builtUrl = started.controlUrl;
    source = await startTestBridge();
  }, 120_000);

  afterAll(async () => {
    if (child) await stop(child);
    await source?.close();
    if (bundleRoot) fs.rmSync(bundleRoot, { recursive: true, force: true });
  });

  it("answers its first /api/health, then lookups by extension (mime-types on first use), with the source's headers", async () => {
    // The first answer after start is the health probe's; the next ones are the first to set a type by name
    // (ctx.type = "json" for an object body, "text/plain", the UI's files), which loads mime-types' tables.
    const requests = [
      { path: "/api/health" },
      { path: "/api/projects", auth: true },
      { path: "/api/nope", auth: true },
      { path: "/api/projects" },
      { path: "/" },
    ];
    const built = await answers(builtUrl, requests);
    const expected = await answers(source.bridge.controlUrl, requests);
    expect(built[0]).toMatchObject({ status: 200, type: "application/json; charset=utf-8" });
    expect(JSON.parse(built[0]!.body)).toMatchObject({ ok: true });
    expect(built[1]).toMatchObject({ status: 200, type: "application/json; charset=utf-8" });
    expect(built.map(({ path, status, type }) => ({ path, status, type }))).toEqual(
      expected.map(({ path, status, type }) => ({ path, status, type })),
    );
    expect(built[2]!.body).toBe(expected[2]!.body);
  });

  it("runs what it loads on first use, and writes a code cache that the next start uses and a garbage one does not break", async () => {
    const serverDir = path.join(bundleRoot, "server");
    const projectDir = makeProjectDir("built-project");
    writeAsAgent(
      path.join(projectDir, "shapes.ts"),
      "export interface Shape { area(): number }\nexport function unit(): Shape { return { area: () => 1 }; }\n",
    );
    // First start (beforeAll): no cache yet; each chunk it compiled gets one a few seconds later.
    const first = await firstLazyCalls(builtUrl, projectDir);
    expect(first.outline).toMatchObject({ ok: true });
    expect(JSON.stringify(first.outline)).toContain("unit");
    expect(first.mcpStatus).toBe(200);
    expect(JSON.parse(first.mcpBody)).toMatchObject({ jsonrpc: "2.0", id: 1, result: { serverInfo: {} } });
    expect((await cacheFiles(serverDir, 3)).size).toBeGreaterThanOrEqual(3);
    await stop(child!);
    // Written a few seconds after the start, and again as it exited with what the calls compiled since.
    const written = await cacheFiles(serverDir, 3);
    expect([...written.keys()].some((n) => n.startsWith("bridge-"))).toBe(true);

    // Second start: the cache is accepted (nothing to rewrite) and the same calls answer the same.
    const second = await startBuilt(path.join(serverDir, "main.js"), makeTempDir("built-state"));
    child = second.child;
    const again = await firstLazyCalls(second.controlUrl, projectDir);
    expect(again.outline).toEqual(first.outline);
    expect(again.mcpStatus).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, CODE_CACHE_WRITE_DELAY_MS + 500));
    const kept = await cacheFiles(serverDir, written.size);
    for (const [name, bytes] of written) expect(kept.get(name)?.equals(bytes), name).toBe(true);
    await stop(child);

    // Garbage in every cache file: V8 rejects it, the chunks compile from source, and the cache is rewritten.
    const dir = path.join(serverDir, CODE_CACHE_DIR, `${process.version}-${process.arch}`);
    for (const name of written.keys()) writeAsAgent(path.join(dir, name), Buffer.alloc(written.get(name)!.length, 7));
    const third = await startBuilt(path.join(serverDir, "main.js"), makeTempDir("built-state"));
    child = third.child;
    const health = await fetch(`${third.controlUrl}/api/health`);
    expect(health.status).toBe(200);
    expect((await firstLazyCalls(third.controlUrl, projectDir)).outline).toEqual(first.outline);
    await new Promise((resolve) => setTimeout(resolve, CODE_CACHE_WRITE_DELAY_MS + 500));
    const rewritten = await cacheFiles(serverDir, written.size);
    for (const name of written.keys())
      expect(rewritten.get(name)?.equals(Buffer.alloc(written.get(name)!.length, 7)), name).toBe(false);
  }, 60_000);

  it("writes every chunk in ASCII, so Node reads none of them into a two-byte string at start-up", () => {
    const serverDir = path.join(bundleRoot, "server");
    const chunks = fs.readdirSync(serverDir).filter((name) => name.endsWith(".js"));
    expect(chunks.length).toBeGreaterThan(3);
    const nonAscii = chunks.filter((name) => fs.readFileSync(path.join(serverDir, name)).some((byte) => byte > 0x7f));
    expect(nonAscii).toEqual([]);
  });

  it("has its cache written by the build's training run (scripts/train-code-cache.mjs), which the next start keeps", async () => {
    if (child) await stop(child);
    const serverDir = path.join(bundleRoot, "server");
    const trained = spawnSync(process.execPath, [path.join(REPO, "scripts", "train-code-cache.mjs"), serverDir], {
      encoding: "utf8",
    });
    expect(trained.stderr).toBe("");
    expect(trained.status).toBe(0);
    const written = await cacheFiles(serverDir, 1);
    expect([...written.keys()].some((n) => n.startsWith("bridge-"))).toBe(true);
    const started = await startBuilt(path.join(serverDir, "main.js"), makeTempDir("built-state"));
    child = started.child;
    expect((await fetch(`${started.controlUrl}/api/health`)).status).toBe(200);
    await stop(child);
    const kept = await cacheFiles(serverDir, written.size);
    for (const [name, bytes] of written) expect(kept.get(name)?.equals(bytes), name).toBe(true);
  }, 60_000);

  it("loads no chunk with the MCP SDK before it listens: the SDK loads after start-up or on the first MCP POST", async () => {
    if (child) await stop(child);
    const serverDir = path.join(bundleRoot, "server");
    const recordDir = makeTempDir("built-loaded");
    const preload = path.join(recordDir, "record-loaded.cjs");
    const list = path.join(recordDir, "loaded.json");
    // Each listen of an HTTP server writes the files loaded so far; the last one written is start-up's whole set.
    fs.writeFileSync(
      preload,
      `const http = require("node:http"); const fs = require("node:fs"); const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  this.once("listening", () => fs.writeFileSync(${JSON.stringify(list)}, JSON.stringify(Object.keys(require.cache))));
  return listen.apply(this, args);
};`,
    );
    const started = await startServerProcess({
      stateDir: makeTempDir("built-state"),
      entry: path.join(serverDir, "main.js"),
      tsx: false,
      env: { NODE_OPTIONS: `--require ${preload}` },
    });
    child = started.child;
    // What a chunk bundles, from its source map (rolldown's runtime and the code cache have none and bundle nothing).
    const withSdk = (file: string) =>
      fs.existsSync(`${file}.map`) &&
      fs.readFileSync(`${file}.map`, "utf8").includes("node_modules/@modelcontextprotocol/server/");
    const loaded = (JSON.parse(fs.readFileSync(list, "utf8")) as string[]).filter(
      (file) => path.dirname(file) === serverDir,
    );
    expect(loaded.some((file) => path.basename(file).startsWith("bridge-"))).toBe(true);
    expect(loaded.filter(withSdk)).toEqual([]);
    // Not vacuous: the bundle has the SDK, in a chunk that loads later.
    const chunks = fs.readdirSync(serverDir).filter((name) => name.endsWith(".js"));
    expect(chunks.some((name) => withSdk(path.join(serverDir, name)))).toBe(true);
  });

  it("plans a large /e in edit-worker.js and searches its nearest lines in nearest-worker.js", async () => {
    if (child) await stop(child);
    const started = await startBuilt(path.join(bundleRoot, "server", "main.js"), makeTempDir("built-state"));
    child = started.child;
    const projectDir = makeProjectDir("built-edit");
    // Over the 256 KiB an edit is planned on the spot and the 64 Ki characters searched on the spot: both workers.
    writeAsAgent(
      path.join(projectDir, "big.txt"),
      Array.from({ length: 12_000 }, (_, i) => `row ${i} of the generated table`).join("\n"),
    );
    const project = await controlPost(started.controlUrl, "/api/projects", {
      name: "built-edit",
      root: projectDir,
      permissions: { write: true, terminal: false },
    });
    const session = await controlPost(started.controlUrl, "/api/sessions", { projectId: project.id });
    const init = (await (await fetch(session.initUrl!)).json()) as { bases: { m: string } };
    const answer = (await (
      await fetch(`${init.bases.m}/e?path=big.txt&old=row~s3210~sof~sthe~sgenerated~stabel&wait=20000&raw=x`)
    ).json()) as Record<string, unknown>;
    expect(answer).toMatchObject({
      ok: false,
      errorCode: "edit_no_match",
      errorDetail: { nearest: { startLine: 3211 } },
    });
    expect(String(answer.excerpt)).toContain("3211: row 3210 of the generated table");
    const edited = (await (
      await fetch(`${init.bases.m}/e?path=big.txt&old=row~s3210~sof&wait=20000&raw=line~s3210~sof`)
    ).json()) as Record<string, unknown>;
    expect(edited).toMatchObject({ ok: true, line: 3211, matchedBy: "exact" });
    expect(fs.readFileSync(path.join(projectDir, "big.txt"), "utf8")).toContain("\nline 3210 of the generated table\n");
  }, 60_000);
});
