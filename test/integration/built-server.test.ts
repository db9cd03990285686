// The server as shipped (`node dist/server/main.js`, the vite/rolldown bundle of scripts/vite.server.config.ts)
// answers like the source: what the bundle loads on first use instead of at start-up (mime-types' tables, see
// the config) works on its first call after a start, and the answers' headers match the source server's.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge } from "../helpers/bridge.js";

const REPO = path.resolve(import.meta.dirname, "../..");
const START_TIMEOUT_MS = 20_000;

/** Builds the bundle two levels below the checkout, where it finds the package root and dist/native as dist/server does. */
function buildBundle(): string {
  const root = fs.mkdtempSync(path.join(REPO, ".test-bundle-"));
  const outDir = path.join(root, "server");
  const vite = path.join(REPO, "node_modules", "vite", "bin", "vite.js");
  const built = spawnSync(process.execPath, [vite, "build", "--config", "scripts/vite.server.config.ts", "--outDir", outDir], { cwd: REPO, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`vite build failed:\n${built.stdout}\n${built.stderr}`);
  return root;
}

/** Starts the built entry and resolves with the control URL it logs once listening. */
function startBuilt(entry: string, stateDir: string): Promise<{ child: ChildProcess; controlUrl: string }> {
  const child = spawn(process.execPath, [entry], {
    cwd: REPO,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: stateDir,
      URLBRIDGE_STATE_DIR: stateDir,
      URLBRIDGE_CONTROL_PORT: "0",
      URLBRIDGE_DATA_PORT: "0",
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
      URLBRIDGE_LOG_LEVEL: "info",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`built server did not start:\n${log}`)), START_TIMEOUT_MS);
    child.once("exit", (code, signal) => reject(new Error(`built server exited (${code ?? signal}) before listening:\n${log}`)));
    child.stderr!.on("data", (data: Buffer) => {
      log += data.toString();
      const controlUrl = /control plane on (\S+)/.exec(log)?.[1];
      if (controlUrl) {
        clearTimeout(timer);
        resolve({ child, controlUrl });
      }
    });
  });
}

/** Status, content type and body of each request, in order, against one server. */
async function answers(base: string, requests: Array<{ path: string; auth?: boolean }>) {
  const out: Array<{ path: string; status: number; type: string | null; body: string }> = [];
  for (const r of requests) {
    const res = await fetch(`${base}${r.path}`, { headers: r.auth ? { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` } : {} });
    out.push({ path: r.path, status: res.status, type: res.headers.get("content-type"), body: await res.text() });
  }
  return out;
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
    child?.kill("SIGKILL");
    await source?.close();
    if (bundleRoot) fs.rmSync(bundleRoot, { recursive: true, force: true });
  });

  it("answers its first /api/health, then lookups by extension (mime-types on first use), with the source's headers", async () => {
    // The first answer after start is the health probe's; the next ones are the first to set a type by name
    // (ctx.type = "json" for an object body, "text/plain", the UI's files), which loads mime-types' tables.
    const requests = [{ path: "/api/health" }, { path: "/api/projects", auth: true }, { path: "/api/nope", auth: true }, { path: "/api/projects" }, { path: "/" }];
    const built = await answers(builtUrl, requests);
    const expected = await answers(source.bridge.controlUrl, requests);
    expect(built[0]).toMatchObject({ status: 200, type: "application/json; charset=utf-8" });
    expect(JSON.parse(built[0]!.body)).toMatchObject({ ok: true });
    expect(built[1]).toMatchObject({ status: 200, type: "application/json; charset=utf-8" });
    expect(built.map(({ path, status, type }) => ({ path, status, type }))).toEqual(expected.map(({ path, status, type }) => ({ path, status, type })));
    expect(built[2]!.body).toBe(expected[2]!.body);
  });
});
