// Floods of unknown capability tokens (issue 10, item 7): past a free allowance per source the opaque 404 is
// held (bounded), the operator gets a bounded summary without tokens, valid tokens are never held, and the
// source is cf-connecting-ip only when the peer is a trusted proxy (URLBRIDGE_TRUSTED_PROXIES).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../../server/log.js";
import {
  FLOOD_SUMMARY_INTERVAL_MS,
  UNKNOWN_TOKEN_BASE_DELAY_MS,
  UNKNOWN_TOKEN_FREE,
  UNKNOWN_TOKEN_MAX_HELD,
  createUnknownTokenThrottle,
} from "../../../server/gateway/unknown-token-throttle.js";
import { agentGet, startTestBridge, type TestBridge } from "../../helpers/bridge.js";
import { rawRequest } from "../control/http-client.js";

const TIMER_SLACK_MS = 2;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function floodBridge(env: Record<string, string> = {}) {
  const lines: string[] = [];
  const t = await startTestBridge(
    { URLBRIDGE_UNKNOWN_TOKEN_THROTTLE: "1", ...env },
    { log: createLogger("warn", (l) => lines.push(l)) },
  );
  closers.push(() => t.close());
  return { t, lines };
}

/** `peer`: the loopback address the request comes from (default 127.0.0.1). */
function getUnknown(t: TestBridge, i: number, clientIp?: string, peer?: string) {
  const token = `Zz${String(i).padStart(6, "0")}`;
  return rawRequest(`${t.bridge.dataUrl}/v0/${token}/t?path=.`, {
    headers: clientIp ? { "cf-connecting-ip": clientIp } : {},
    ...(peer ? { localAddress: peer } : {}),
  });
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

describe("unknown-token floods on the data plane", () => {
  it("holds the opaque 404 past the free allowance, byte for byte the same answer, and logs a summary without tokens", async () => {
    const { t, lines } = await floodBridge();
    const first = await getUnknown(t, 0, "198.51.100.1");
    // Spoofed cf-connecting-ip values from an untrusted peer: all one source, the peer.
    for (let i = 1; i < UNKNOWN_TOKEN_FREE; i++)
      expect((await getUnknown(t, i, `198.51.100.${i + 1}`)).status).toBe(404);
    expect(lines).toEqual([]);
    const held = await timed(() => getUnknown(t, UNKNOWN_TOKEN_FREE, "198.51.100.99"));
    expect(held.ms).toBeGreaterThanOrEqual(UNKNOWN_TOKEN_BASE_DELAY_MS - TIMER_SLACK_MS);
    const { date: _a, ...firstHeaders } = first.headers;
    const { date: _b, ...heldHeaders } = held.value.headers;
    expect({ status: held.value.status, text: held.value.text, headers: heldHeaders }).toEqual({
      status: first.status,
      text: first.text,
      headers: firstHeaders,
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/unknown capability tokens: \d+ in \d+ s from 1 source\(s\) \(top: 127\.0\.0\.1 21\)/);
    expect(lines[0]).not.toMatch(/Zz\d{6}|198\.51\.100/);
  });

  it("never holds a valid token, however many unknown ones the same source sent", async () => {
    const { t } = await floodBridge();
    const s = await t.session();
    for (let i = 0; i < UNKNOWN_TOKEN_FREE + 4; i++) await getUnknown(t, i).catch(() => undefined);
    let heldSettled = 0;
    const heldBatch = Array.from({ length: 8 }, (_, i) => getUnknown(t, 100 + i).then((r) => ((heldSettled += 1), r)));
    const valid = await agentGet(`${s.r}/t?path=.`);
    expect(valid).toMatchObject({ ok: true });
    expect(heldSettled).toBe(0);
    for (const r of await Promise.all(heldBatch)) expect(r.status).toBe(404);
  });

  it("keys on cf-connecting-ip only when the peer is a trusted proxy", async () => {
    const { t, lines } = await floodBridge({ URLBRIDGE_TRUSTED_PROXIES: "127.0.0.1" });
    // Many clients behind the tunnel, each under the allowance: nobody is held, nothing is logged.
    for (let i = 0; i < UNKNOWN_TOKEN_FREE * 2; i++) await getUnknown(t, i, `203.0.113.${i + 1}`);
    expect(lines).toEqual([]);
    // One client over it: held, and named by its forwarded address.
    for (let i = 0; i < UNKNOWN_TOKEN_FREE; i++) await getUnknown(t, 500 + i, "2001:db8::7");
    const held = await timed(() => getUnknown(t, 999, "2001:db8::7"));
    expect(held.ms).toBeGreaterThanOrEqual(UNKNOWN_TOKEN_BASE_DELAY_MS - TIMER_SLACK_MS);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("(top: 2001:db8::7 21");
  });
});

describe("trusting cf-connecting-ip from the tunnel only (issue 28, item 6)", () => {
  it("believes the header from the tunnel's resolved address, never from another peer beside it", async () => {
    // "localhost" stands for compose's "tunnel" service: a name resolved to the tunnel's own address (127.0.0.1
    // here). 127.0.0.2 is another container on the same network: before, compose trusted the whole subnet.
    const { t, lines } = await floodBridge({ URLBRIDGE_TRUSTED_PROXIES: "localhost" });
    const neighbour = "127.0.0.2";
    for (let i = 0; i < UNKNOWN_TOKEN_FREE; i++)
      expect((await getUnknown(t, i, `198.51.100.${i + 1}`, neighbour)).status).toBe(404);
    expect(lines).toEqual([]);
    // The 21st guess, under yet another forwarded address: held and counted against the neighbour itself.
    expect((await getUnknown(t, UNKNOWN_TOKEN_FREE, "198.51.100.250", neighbour)).status).toBe(404);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/from 1 source\(s\) \(top: 127\.0\.0\.2 21\); 1 answers held/);

    // The tunnel's own requests name their clients: many clients, each under the allowance, are not held.
    for (let i = 0; i < UNKNOWN_TOKEN_FREE * 2; i++) await getUnknown(t, 200 + i, `203.0.113.${i + 1}`, "127.0.0.1");
    expect(lines).toHaveLength(1);
  });
});

describe("unknown-token throttle bounds", () => {
  it(`holds at most ${UNKNOWN_TOKEN_MAX_HELD} answers at once and logs at most one summary per interval`, async () => {
    const lines: string[] = [];
    let now = 1_000_000;
    const throttle = createUnknownTokenThrottle(
      createLogger("warn", (l) => lines.push(l)),
      () => now,
    );
    const server = http.createServer((req, res) => throttle.answer(res, "192.0.2.50"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    for (let i = 0; i < UNKNOWN_TOKEN_FREE; i++) expect((await rawRequest(`${base}/v0/x${i}`)).status).toBe(404);
    const extra = 16;
    const flood = await Promise.all(
      Array.from({ length: UNKNOWN_TOKEN_MAX_HELD + extra }, (_, i) => rawRequest(`${base}/v0/y${i}`)),
    );
    expect(flood.every((r) => r.status === 404)).toBe(true);
    expect(lines).toHaveLength(1);
    // Within the interval the rest is tallied, not logged; the next summary comes once the interval is over.
    now += FLOOD_SUMMARY_INTERVAL_MS;
    await rawRequest(`${base}/v0/z`);
    expect(lines).toHaveLength(2);
    const all = lines.join("");
    const held = [...all.matchAll(/(\d+) answers held, (\d+) answered at once/g)].map((m) => [
      Number(m[1]),
      Number(m[2]),
    ]);
    expect(held.reduce((sum, [h]) => sum + h!, 0)).toBe(UNKNOWN_TOKEN_MAX_HELD);
    expect(held.reduce((sum, [, a]) => sum + a!, 0)).toBe(extra);
  });
});
