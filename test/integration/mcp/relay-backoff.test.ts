// Stand-in: a socket listener owned by this test at the relay's <state dir>/mcp.sock, refusing every hello as a
// bridge refuses an unknown capability, so the test can count and time the relay's attempts to open its socket leg
// (server/cli/mcp-socket-route.ts); the real test bridge serves every message over HTTP meanwhile. The attempts come
// at most once per backoff interval, the interval doubles, and no message waits for one.
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REOPEN_MAX_MS, REOPEN_MIN_MS } from "../../../server/cli/mcp-socket-route.js";
import { makeTempDir, startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge } from "../../helpers/bridge.js";
import { startRelay } from "../../helpers/relay-process.js";
import { cliEnv } from "../cli/run-cli.js";

const PINGS = 60;
const PING_GAP_MS = 40;

describe("the stdio relay's attempts to open its socket leg", () => {
  let t: TestBridge;
  let listener: net.Server;
  let relayStateDir: string;
  const attempts: number[] = [];
  const accepted = new Set<net.Socket>();

  beforeAll(async () => {
    t = await startTestBridge();
    await t.session({ name: "backoff" });
    relayStateDir = makeTempDir("backoff-state");
    listener = net.createServer((socket) => {
      attempts.push(performance.now());
      accepted.add(socket);
      socket.once("close", () => accepted.delete(socket));
      socket.on("error", () => {});
      socket.end(`${JSON.stringify({ "urlbridge/unauthorized": {} })}\n`);
    });
    await new Promise<void>((resolve) => listener.listen(path.join(relayStateDir, "mcp.sock"), resolve));
  });
  afterAll(async () => {
    const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
    for (const socket of accepted) socket.destroy();
    await closed;
    await t.close();
  });

  it(
    "come at most once per interval, doubling from the least, while every message is answered over HTTP",
    { timeout: 60_000 },
    async () => {
      expect(fs.lstatSync(path.join(relayStateDir, "mcp.sock")).isSocket()).toBe(true);
      const env = cliEnv({
        URLBRIDGE_STATE_DIR: relayStateDir,
        URLBRIDGE_CONTROL_PORT: new URL(t.bridge.controlUrl).port,
        URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
      });
      const relay = startRelay("backoff-1", env);
      const started = performance.now();
      try {
        for (let id = 1; id <= PINGS; id++) {
          relay.send({ jsonrpc: "2.0", id, method: "ping" });
          expect(JSON.parse(await relay.next())).toEqual({ jsonrpc: "2.0", id, result: {} });
          await sleep(PING_GAP_MS);
        }
      } finally {
        expect(await relay.end()).toBe(0);
      }
      const elapsed = performance.now() - started;
      // The one at start, then again on later messages: the relay did not give up on the socket.
      expect(attempts.length).toBeGreaterThanOrEqual(2);
      // Attempt k comes no sooner than REOPEN_MIN_MS * (2^k - 1) after the first (a slow machine only makes it later).
      expect(attempts.length).toBeLessThanOrEqual(1 + Math.floor(Math.log2(elapsed / REOPEN_MIN_MS + 1)));
      for (let k = 1; k < attempts.length; k++) {
        const interval = Math.min(REOPEN_MIN_MS * 2 ** (k - 1), REOPEN_MAX_MS);
        // 5 ms for the clocks of two processes and timer granularity.
        expect(attempts[k]! - attempts[k - 1]!).toBeGreaterThanOrEqual(interval - 5);
      }
    },
  );
});
