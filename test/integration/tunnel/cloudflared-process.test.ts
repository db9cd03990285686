// `npm start` with URLBRIDGE_CLOUDFLARED=1: the bridge spawns cloudflared itself (here a stand-in executable on
// PATH, fake-bin/cloudflared), discovers its hostname, and on close ends only what it spawned and cleans up.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { OriginState } from "../../../server/tunnel/public-origin.js";
import { findOnPath } from "../../../server/tunnel/cloudflared-process.js";
import { makeTempDir, startTestBridge, type TestBridge } from "../../helpers/bridge.js";

const FAKE_BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), "fake-bin");
const FAKE_HOSTNAME = "spawned-by-bridge.trycloudflare.com";

interface FakeRecord {
  pid: number;
  args: string[];
  configExisted: boolean;
  configContent: string | undefined;
  events: string[];
}

const savedEnv: Record<string, string | undefined> = {};
let scratch: string;
let recordFile: string;
let bridge: TestBridge | undefined;
let outsider: ChildProcess | undefined;

function setEnv(values: Record<string, string>): void {
  for (const [name, value] of Object.entries(values)) {
    if (!(name in savedEnv)) savedEnv[name] = process.env[name];
    process.env[name] = value;
  }
}

const readRecord = (file = recordFile): FakeRecord | undefined =>
  fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as FakeRecord) : undefined;
const flag = (record: FakeRecord, name: string) => record.args[record.args.indexOf(name) + 1];

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until<T>(read: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeEach(() => {
  scratch = makeTempDir("cloudflared");
  recordFile = path.join(scratch, "record.json");
  setEnv({
    PATH: `${FAKE_BIN}${path.delimiter}${process.env.PATH ?? ""}`,
    FAKE_CLOUDFLARED_RECORD: recordFile,
    FAKE_CLOUDFLARED_HOSTNAME: FAKE_HOSTNAME,
  });
});

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
  if (outsider?.pid && isAlive(outsider.pid)) outsider.kill("SIGKILL");
  outsider = undefined;
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
    delete savedEnv[name];
  }
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe("cloudflared spawned by the bridge", () => {
  it("starts a quick tunnel with HTTP/2, an empty temporary config and loopback metrics, and uses its hostname", async () => {
    bridge = await startTestBridge({ URLBRIDGE_CLOUDFLARED: "1" });
    const record = await until(() => readRecord());
    expect(record.args.slice(0, 2)).toEqual(["tunnel", "--no-autoupdate"]);
    expect(flag(record, "--protocol")).toBe("http2");
    expect(flag(record, "--url")).toBe(bridge.bridge.dataUrl);
    expect(flag(record, "--metrics")).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(record.configExisted).toBe(true);
    expect(record.configContent).toBe("");

    await bridge.bridge.publicOrigin.refresh();
    const state = (await bridge.api<OriginState>("GET", "/api/tunnel")).body;
    expect(state).toMatchObject({ source: "quick_tunnel", origin: `https://${FAKE_HOSTNAME}` });
    expect(state.tunnel).toMatchObject({
      metricsUrl: `http://${flag(record, "--metrics")}`,
      reachable: true,
      ready: true,
    });
  });

  it("on close ends the process it spawned and removes the temporary config", async () => {
    bridge = await startTestBridge({ URLBRIDGE_CLOUDFLARED: "1" });
    const record = await until(() => readRecord());
    const configFile = flag(record, "--config")!;
    expect(fs.existsSync(configFile)).toBe(true);
    expect(isAlive(record.pid)).toBe(true);

    await bridge.close();
    bridge = undefined;
    expect(readRecord()!.events).toContain("SIGTERM");
    expect(isAlive(record.pid)).toBe(false);
    expect(fs.existsSync(configFile)).toBe(false);
    expect(fs.existsSync(path.dirname(configFile))).toBe(false);
  });

  it("never signals a cloudflared it did not spawn", async () => {
    const outsiderRecord = path.join(scratch, "outsider.json");
    outsider = spawn(
      path.join(FAKE_BIN, "cloudflared"),
      ["tunnel", "--metrics", "127.0.0.1:0", "--url", "http://127.0.0.1:9"],
      {
        env: { ...process.env, FAKE_CLOUDFLARED_RECORD: outsiderRecord },
        stdio: "ignore",
      },
    );
    await until(() => readRecord(outsiderRecord));

    bridge = await startTestBridge({ URLBRIDGE_CLOUDFLARED: "1" });
    const own = await until(() => readRecord());
    expect(own.pid).not.toBe(outsider.pid);
    await bridge.close();
    bridge = undefined;

    expect(isAlive(outsider.pid!)).toBe(true);
    expect(readRecord(outsiderRecord)!.events).toEqual(["started"]);
  });

  it("spawns nothing when URLBRIDGE_TUNNEL_METRICS names a cloudflared already", async () => {
    bridge = await startTestBridge({ URLBRIDGE_CLOUDFLARED: "1", URLBRIDGE_TUNNEL_METRICS: "http://127.0.0.1:9" });
    const state = (await bridge.api<OriginState>("GET", "/api/tunnel")).body;
    expect(state.tunnel.metricsUrl).toBe("http://127.0.0.1:9");
    // Give a wrongly spawned process time to write its record before asserting there is none.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(readRecord()).toBeUndefined();
  });

  it("starts without a tunnel, and says so, when no cloudflared is on PATH", async () => {
    setEnv({ PATH: makeTempDir("empty-path") });
    expect(findOnPath("cloudflared")).toBeUndefined();
    bridge = await startTestBridge({ URLBRIDGE_CLOUDFLARED: "1" });
    const state = (await bridge.api<OriginState>("GET", "/api/tunnel")).body;
    expect(state).toMatchObject({ source: "local", origin: bridge.bridge.dataUrl });
    expect(state.summary).toMatch(/^No tunnel configured/);
    expect(readRecord()).toBeUndefined();
  });

  it("finds executables on a search path and skips folders and non-executables", () => {
    const dir = makeTempDir("search-path");
    fs.mkdirSync(path.join(dir, "cloudflared-dir"));
    fs.writeFileSync(path.join(dir, "not-executable"), "", { mode: 0o644 });
    expect(findOnPath("cloudflared", `${dir}${path.delimiter}${FAKE_BIN}`)).toBe(path.join(FAKE_BIN, "cloudflared"));
    expect(findOnPath("cloudflared-dir", dir)).toBeUndefined();
    expect(findOnPath("not-executable", dir)).toBeUndefined();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
