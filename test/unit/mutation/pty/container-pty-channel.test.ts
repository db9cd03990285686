// The container PTY channel over a real socket pair standing in for the Docker exec's hijacked connection (the
// engine is a process boundary we do not own: its resize and inspect calls are recorded here, labelled as such).
// Output in order, writes and resizes in the order made, a signal after both, flow control, and the exit reported
// after the stream's end with the exec's exit code, once the job's leftovers were ended.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ContainerPtyChannel } from "../../../../server/mutation/terminal/pty/container-pty-channel.js";
import type { PtyExit } from "../../../../server/mutation/terminal/pty/pty-channel.js";

interface Pair {
  /** The engine's end: what the program writes goes in here, what is typed comes out. */
  engine: net.Socket;
  /** The bridge's end, as dockerode hands the hijacked connection. */
  bridge: net.Socket;
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function socketPair(): Promise<Pair> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pty-channel-"));
  const file = path.join(dir, "exec.sock");
  const server = net.createServer();
  const accepted = new Promise<net.Socket>((resolve) => server.once("connection", resolve));
  await new Promise<void>((resolve) => server.listen(file, resolve));
  const bridge = net.connect(file);
  const engine = await accepted;
  cleanups.push(() => {
    engine.destroy();
    bridge.destroy();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { engine, bridge };
}

/** A channel over a socket pair, with the engine's API calls and the job's second execs recorded in `events`. */
async function channelOver(options: { resizeMs?: number; exitCode?: number | null } = {}) {
  const pair = await socketPair();
  const events: string[] = [];
  pair.engine.on("data", (chunk: Buffer) => events.push(`typed ${chunk.toString("utf8")}`));
  const channel = new ContainerPtyChannel({
    handle: 10_000_123,
    exec: {
      stream: pair.bridge,
      resize: async (rows, cols) => {
        await new Promise((resolve) => setTimeout(resolve, options.resizeMs ?? 0));
        events.push(`resize ${rows}x${cols}`);
      },
      exitCode: () => {
        events.push("inspect");
        return Promise.resolve(options.exitCode === undefined ? 0 : options.exitCode);
      },
    },
    signalGroup: (signal) => {
      events.push(`signal ${signal}`);
      return Promise.resolve(77);
    },
    endJob: () => {
      events.push("end job");
      return Promise.resolve(0);
    },
  });
  const output: Buffer[] = [];
  channel.onData((chunk) => output.push(chunk));
  const exited = new Promise<PtyExit>((resolve) => channel.onExit(resolve));
  return { ...pair, channel, events, output, exited };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  return check();
};

describe("ContainerPtyChannel", () => {
  it("hands over the output in order and reports the exit after the stream's end, leftovers ended first", async () => {
    const { engine, channel, events, output, exited } = await channelOver({ exitCode: 3 });
    expect(channel.pid).toBe(10_000_123);
    engine.write("caf\xc3", "latin1");
    engine.end("\xa9 done\r\n", "latin1");
    expect(await exited).toEqual({ exitCode: 3, signal: null });
    expect(Buffer.concat(output).toString("utf8")).toBe("café done\r\n");
    expect(events).toEqual(["inspect", "end job"]);
    // A listener added after the exit still hears it.
    expect(await new Promise((resolve) => channel.onExit(resolve))).toEqual({ exitCode: 3, signal: null });
  });

  it("sends writes and resizes in the order they were made, and a signal after both", async () => {
    const { engine, channel, events } = await channelOver({ resizeMs: 50 });
    channel.resize(30, 100);
    channel.write("stty size\r");
    const group = await channel.signal("SIGINT");
    expect(group).toBe(77);
    expect(await until(() => events.includes("typed stty size\r"))).toBe(true);
    // The resize answers 50 ms later: without the ordering, the typed text would reach the program first.
    expect(events.indexOf("resize 30x100")).toBeLessThan(events.indexOf("typed stty size\r"));
    expect(events.indexOf("resize 30x100")).toBeLessThan(events.indexOf("signal INT"));
    engine.end();
  });

  it("holds output back while paused; the engine's side backs up, and all of it arrives after resume", async () => {
    const { engine, channel, output } = await channelOver();
    channel.pause();
    const flood = Buffer.alloc(4 * 1024 * 1024, "x");
    const written = new Promise<void>((resolve) => engine.write(flood, () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(output).toEqual([]);
    expect(engine.writableLength).toBeGreaterThan(0);
    channel.resume();
    await written;
    expect(await until(() => output.reduce((sum, chunk) => sum + chunk.length, 0) === flood.length)).toBe(true);
    engine.end();
  });

  it("ends the job when asked, drops the connection when forced, and still reports the exit", async () => {
    const { channel, events, exited } = await channelOver({ exitCode: null });
    channel.end(false);
    expect(events).toEqual(["end job"]);
    channel.end(true);
    expect(await exited).toEqual({ exitCode: null, signal: null });
    expect(await channel.signal("SIGINT")).toBeUndefined();
    expect(events.filter((e) => e.startsWith("signal"))).toEqual([]);
  });
});
