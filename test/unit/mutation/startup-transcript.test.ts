import { describe, expect, it } from "vitest";
import {
  detectEndpoints,
  StartupTranscript,
  watchStartup,
} from "../../../server/mutation/terminal/startup-transcript.js";

describe("detectEndpoints", () => {
  it.each([
    ["  ➜  Local:   http://localhost:5173/", ["http://localhost:5173/"], [5173]],
    [
      "\x1b[32m➜\x1b[39m  Local: \x1b[36mhttp://127.0.0.1:\x1b[1m3000\x1b[22m/\x1b[39m",
      ["http://127.0.0.1:3000/"],
      [3000],
    ],
    ["Server running at http://0.0.0.0:8000.", ["http://0.0.0.0:8000"], [8000]],
    ["listening on http://[::1]:4000/api", ["http://[::1]:4000/api"], [4000]],
    ["Listening on port 8080", [], [8080]],
    ["server started, port: 9229", [], [9229]],
    ["Uvicorn running on 127.0.0.1:8001 (Press CTRL+C to quit)", [], [8001]],
    ["bound to *:6006", [], [6006]],
    ["https://localhost/ ready", ["https://localhost/"], [443]],
  ])("finds addresses in %j", (line, urls, ports) => {
    expect(detectEndpoints(line)).toEqual({ urls, ports });
  });

  it.each([
    "Network: http://192.168.1.20:5173/",
    "see https://example.com:8080/docs",
    "port is not configured",
    "listening on port 99999",
    "compiled 120 modules in 300ms",
  ])("ignores %j", (line) => {
    expect(detectEndpoints(line)).toEqual({ urls: [], ports: [] });
  });

  it("deduplicates and caps what it reports", () => {
    const text = Array.from({ length: 20 }, (_, i) => `http://localhost:${3000 + i}/ http://localhost:3000/`).join(
      "\n",
    );
    const found = detectEndpoints(text);
    expect(found.urls.length).toBe(8);
    expect(new Set(found.urls).size).toBe(8);
  });
});

describe("StartupTranscript", () => {
  it("detects an address split across chunks and in an unterminated last line", () => {
    const t = new StartupTranscript();
    t.push(Buffer.from("ready at http://loc"));
    expect(t.hasAddress()).toBe(false);
    t.push(Buffer.from("alhost:41"));
    t.push(Buffer.from("23/\nlistening on port 5000"));
    expect(t.detected.urls).toEqual(["http://localhost:4123/"]);
    const out = t.finish();
    expect(t.detected.ports).toEqual([4123, 5000]);
    expect(out.text).toBe("ready at http://localhost:4123/\nlistening on port 5000");
  });
});

describe("watchStartup", () => {
  it("ends at exit", async () => {
    const t = new StartupTranscript();
    expect(await watchStartup({ transcript: t, exited: Promise.resolve(), windowMs: 10_000 })).toBe("exited");
  });

  it("ends at the window when nothing is announced", async () => {
    const t = new StartupTranscript();
    t.push(Buffer.from("compiling...\n"));
    expect(await watchStartup({ transcript: t, exited: new Promise(() => {}), windowMs: 120, quietMs: 20 })).toBe(
      "window",
    );
  });

  it("ends early once an address was announced and output went quiet", async () => {
    const t = new StartupTranscript();
    t.push(Buffer.from("Local: http://localhost:5173/\n"));
    expect(await watchStartup({ transcript: t, exited: new Promise(() => {}), windowMs: 60_000, quietMs: 20 })).toBe(
      "announced",
    );
  });
});
