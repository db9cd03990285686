// Tunnel discovery end to end in-process: a real bridge polls a cloudflared-like metrics server and applies
// the public-origin precedence (env → saved setting → quick tunnel → local) to /api/tunnel, Init URLs and bases.
import type { AddressInfo } from "node:net";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { OriginState } from "../../../server/tunnel/public-origin.js";
import { startTestBridge, type TestBridge } from "../../helpers/bridge.js";
import { startMetricsStandIn, unusedLoopbackUrl, type MetricsStandIn } from "./metrics-standin.js";

const QUICK_HOST = "calm-river-delta.trycloudflare.com";

let bridges: TestBridge[] = [];
let standIns: MetricsStandIn[] = [];

afterEach(async () => {
  await Promise.all(bridges.map((b) => b.close()));
  await Promise.all(standIns.map((s) => s.close()));
  bridges = [];
  standIns = [];
});

async function metrics(initial: { hostname?: string; readyConnections?: number }) {
  const standIn = await startMetricsStandIn(initial);
  standIns.push(standIn);
  return standIn;
}

async function bridge(env: Record<string, string>) {
  const t = await startTestBridge(env);
  bridges.push(t);
  return t;
}

async function tunnelState(t: TestBridge): Promise<OriginState> {
  const res = await t.api<OriginState>("GET", "/api/tunnel");
  expect(res.status).toBe(200);
  return res.body;
}

/** Creates a project on the test's folder and one session; returns the Init URL the control API hands out. */
async function createInitUrl(t: TestBridge): Promise<string> {
  const project = await t.api<{ id: string }>("POST", "/api/projects", {
    name: `p-${Math.random().toString(36).slice(2, 8)}`,
    root: t.projectDir,
    permissions: { write: false, terminal: false },
  });
  expect(project.status).toBe(201);
  const session = await t.api<{ initUrl: string }>("POST", "/api/sessions", { projectId: project.body.id });
  expect(session.status).toBe(201);
  return session.body.initUrl;
}

/** Fetches an Init URL through the local data plane whatever public origin it carries. */
async function fetchInitLocally(t: TestBridge, initUrl: string) {
  const local = new URL(initUrl);
  const res = await fetch(`${t.bridge.dataUrl}${local.pathname}`);
  return (await res.json()) as { bases: { r: string; m?: string } };
}

describe("tunnel discovery", () => {
  it("finds the quick-tunnel hostname by polling on its own and puts it into Init URLs and bases", async () => {
    const standIn = await metrics({ hostname: QUICK_HOST, readyConnections: 4 });
    const t = await bridge({ URLBRIDGE_TUNNEL_METRICS: standIn.url });
    // No manual refresh: the bridge's own poll (started with the planes) must find it.
    await expect
      .poll(async () => (await tunnelState(t)).source, { timeout: 10_000, interval: 100 })
      .toBe("quick_tunnel");
    const state = await tunnelState(t);
    expect(state.origin).toBe(`https://${QUICK_HOST}`);
    expect(state.tunnel).toMatchObject({ metricsUrl: standIn.url, reachable: true, hostname: QUICK_HOST, ready: true });
    expect(state.summary).toMatch(/quick tunnel; it is connected/);
    expect(standIn.requests).toEqual(expect.arrayContaining(["/quicktunnel", "/ready"]));

    const initUrl = await createInitUrl(t);
    expect(initUrl.startsWith(`https://${QUICK_HOST}/v0/init/`)).toBe(true);
    const init = await fetchInitLocally(t, initUrl);
    expect(init.bases.r.startsWith(`https://${QUICK_HOST}/v0/`)).toBe(true);
  });

  it("reports a hostname whose tunnel is not connected yet as not ready", async () => {
    const standIn = await metrics({ hostname: QUICK_HOST, readyConnections: 0 });
    const t = await bridge({ URLBRIDGE_TUNNEL_METRICS: standIn.url });
    await t.bridge.publicOrigin.refresh();
    const state = await tunnelState(t);
    expect(state.source).toBe("quick_tunnel");
    expect(state.tunnel.ready).toBe(false);
    expect(state.summary).toMatch(/not ready yet/);

    standIn.readyConnections = 2;
    await t.bridge.publicOrigin.refresh();
    expect((await tunnelState(t)).tunnel.ready).toBe(true);
  });

  it("falls back to the local data-plane origin and says why when the metrics server is unreachable", async () => {
    const nothing = await unusedLoopbackUrl();
    const t = await bridge({ URLBRIDGE_TUNNEL_METRICS: nothing });
    await t.bridge.publicOrigin.refresh();
    const state = await tunnelState(t);
    expect(state.source).toBe("local");
    expect(state.origin).toBe(t.bridge.dataUrl);
    expect(state.tunnel.reachable).toBe(false);
    expect(state.tunnel.error).toMatch(/^unreachable: .*ECONNREFUSED/);
    expect(state.summary).toContain(nothing);
    expect(state.summary).toMatch(/local data-plane origin/);
    expect((await createInitUrl(t)).startsWith(`${t.bridge.dataUrl}/v0/init/`)).toBe(true);
  });

  it("gives up on a metrics server that never answers and says so", async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const t = await bridge({
        URLBRIDGE_TUNNEL_METRICS: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      });
      await t.bridge.publicOrigin.refresh();
      const state = await tunnelState(t);
      expect(state.source).toBe("local");
      expect(state.tunnel.error).toMatch(/^unreachable: no answer within \d+ ms$/);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("says plainly that no tunnel is configured when URLBRIDGE_TUNNEL_METRICS is unset", async () => {
    const t = await bridge({});
    const state = await tunnelState(t);
    expect(state).toMatchObject({ source: "local", origin: t.bridge.dataUrl });
    expect(state.tunnel.metricsUrl).toBeUndefined();
    expect(state.tunnel.reachable).toBe(false);
    expect(state.summary).toMatch(/^No tunnel configured/);
  });

  it("treats an empty hostname (a named tunnel) as no quick tunnel", async () => {
    const standIn = await metrics({ hostname: "", readyConnections: 4 });
    const t = await bridge({ URLBRIDGE_TUNNEL_METRICS: standIn.url });
    await t.bridge.publicOrigin.refresh();
    const state = await tunnelState(t);
    expect(state.source).toBe("local");
    expect(state.tunnel).toMatchObject({ reachable: true, ready: true });
    expect(state.tunnel.hostname).toBeUndefined();
    expect(state.tunnel.error).toMatch(/no quick-tunnel hostname/);
  });

  it("reports an HTTP error from /quicktunnel as such, not as an unreachable server", async () => {
    const standIn = await metrics({ hostname: QUICK_HOST, readyConnections: 1 });
    standIn.quickTunnelStatus = 404;
    const t = await bridge({ URLBRIDGE_TUNNEL_METRICS: standIn.url });
    await t.bridge.publicOrigin.refresh();
    const state = await tunnelState(t);
    expect(state.source).toBe("local");
    expect(state.tunnel.reachable).toBe(true);
    expect(state.tunnel.error).toBe("metrics server answered /quicktunnel with HTTP 404");
  });

  it.each([
    ["a scheme", "https://evil.example"],
    ["a path", "evil.example/v0"],
    ["credentials", "user@evil.example"],
    ["spaces", "evil example"],
    ["a leading dot", ".trycloudflare.com"],
  ])("refuses a hostname with %s", async (_what, hostname) => {
    const standIn = await metrics({ hostname, readyConnections: 1 });
    const t = await bridge({ URLBRIDGE_TUNNEL_METRICS: standIn.url });
    await t.bridge.publicOrigin.refresh();
    const state = await tunnelState(t);
    expect(state.source).toBe("local");
    expect(state.tunnel.hostname).toBeUndefined();
  });

  it.each([
    ["another domain", "evil.example"],
    ["trycloudflare.com inside another domain", "calm-river.trycloudflare.com.evil.example"],
    ["two labels under trycloudflare.com", "a.calm-river.trycloudflare.com"],
    ["trycloudflare.com itself", "trycloudflare.com"],
    ["a port", "calm-river.trycloudflare.com:8443"],
    ["an IP address", "203.0.113.7"],
    ["a label over 63 characters", `${"a".repeat(64)}.trycloudflare.com`],
    ["a look-alike domain", "calm-river.trycloudflare.co"],
  ])("ignores a hostile metrics server's %s and reports it on the Tunnel page", async (_what, hostname) => {
    const standIn = await metrics({ hostname, readyConnections: 1 });
    const t = await bridge({ URLBRIDGE_TUNNEL_METRICS: standIn.url });
    await t.bridge.publicOrigin.refresh();
    const state = await tunnelState(t);
    expect(state).toMatchObject({ source: "local", origin: t.bridge.dataUrl });
    expect(state.tunnel).toMatchObject({ reachable: true, untrustedHostname: hostname });
    expect(state.tunnel.hostname).toBeUndefined();
    expect(state.tunnel.error).toContain(
      `reported "${hostname}", which is not a <name>.trycloudflare.com quick-tunnel hostname; ignored`,
    );
    expect(state.summary).toContain("not a <name>.trycloudflare.com");
    const initUrl = await createInitUrl(t);
    expect(initUrl.startsWith(`${t.bridge.dataUrl}/v0/init/`)).toBe(true);
    expect((await fetchInitLocally(t, initUrl)).bases.r.startsWith(`${t.bridge.dataUrl}/v0/`)).toBe(true);
  });

  it("drops a trusted hostname when the metrics server turns hostile, and shortens what it shows", async () => {
    const standIn = await metrics({ hostname: QUICK_HOST, readyConnections: 1 });
    const t = await bridge({ URLBRIDGE_TUNNEL_METRICS: standIn.url });
    await t.bridge.publicOrigin.refresh();
    expect((await tunnelState(t)).origin).toBe(`https://${QUICK_HOST}`);
    standIn.hostname = `phish-${"x".repeat(300)}.example\u0007`;
    await t.bridge.publicOrigin.refresh();
    const state = await tunnelState(t);
    expect(state.source).toBe("local");
    expect(state.tunnel.untrustedHostname).toBe(`phish-${"x".repeat(114)}…`);
    standIn.hostname = QUICK_HOST;
    await t.bridge.publicOrigin.refresh();
    const healed = (await tunnelState(t)).tunnel;
    expect(healed.hostname).toBe(QUICK_HOST);
    expect(healed.untrustedHostname).toBeUndefined();
  });

  it("follows a new hostname when the quick tunnel restarts, and keeps the last one through a metrics outage", async () => {
    const standIn = await metrics({ hostname: QUICK_HOST, readyConnections: 1 });
    const t = await bridge({ URLBRIDGE_TUNNEL_METRICS: standIn.url });
    await t.bridge.publicOrigin.refresh();
    expect((await tunnelState(t)).origin).toBe(`https://${QUICK_HOST}`);

    standIn.hostname = "other-words-here.trycloudflare.com";
    await t.bridge.publicOrigin.refresh();
    expect((await tunnelState(t)).origin).toBe("https://other-words-here.trycloudflare.com");

    await standIn.close();
    standIns = standIns.filter((s) => s !== standIn);
    await t.bridge.publicOrigin.refresh();
    const state = await tunnelState(t);
    expect(state.origin).toBe("https://other-words-here.trycloudflare.com");
    expect(state.tunnel).toMatchObject({ reachable: false, ready: false });
    expect(state.summary).toMatch(/last quick-tunnel hostname.*unreachable/);
  });
});

describe("public-origin precedence", () => {
  it("prefers the saved setting over the quick tunnel, and returns to the tunnel when it is cleared", async () => {
    const standIn = await metrics({ hostname: QUICK_HOST, readyConnections: 1 });
    const t = await bridge({ URLBRIDGE_TUNNEL_METRICS: standIn.url });
    await t.bridge.publicOrigin.refresh();

    const saved = await t.api<OriginState>("PUT", "/api/tunnel", { publicOrigin: "https://bridge.example.org/" });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      source: "setting",
      origin: "https://bridge.example.org",
      savedOrigin: "https://bridge.example.org",
    });
    expect(saved.body.summary).toMatch(/saved in the control plane\. cloudflared reports a live edge connection/);
    expect((await createInitUrl(t)).startsWith("https://bridge.example.org/v0/init/")).toBe(true);

    const cleared = await t.api<OriginState>("PUT", "/api/tunnel", { publicOrigin: null });
    expect(cleared.body).toMatchObject({ source: "quick_tunnel", origin: `https://${QUICK_HOST}` });
    expect(cleared.body.savedOrigin).toBeUndefined();
  });

  it("prefers URLBRIDGE_PUBLIC_ORIGIN over a saved setting and the quick tunnel", async () => {
    const standIn = await metrics({ hostname: QUICK_HOST, readyConnections: 0 });
    const t = await bridge({
      URLBRIDGE_TUNNEL_METRICS: standIn.url,
      URLBRIDGE_PUBLIC_ORIGIN: "https://agents.example.com",
    });
    await t.api("PUT", "/api/tunnel", { publicOrigin: "https://bridge.example.org" });
    await t.bridge.publicOrigin.refresh();
    const state = await tunnelState(t);
    expect(state).toMatchObject({
      source: "env",
      origin: "https://agents.example.com",
      envOrigin: "https://agents.example.com",
    });
    expect(state.summary).toBe("Using URLBRIDGE_PUBLIC_ORIGIN. cloudflared reports no live edge connection yet.");
    const initUrl = await createInitUrl(t);
    expect(initUrl.startsWith("https://agents.example.com/v0/init/")).toBe(true);
    expect((await fetchInitLocally(t, initUrl)).bases.r.startsWith("https://agents.example.com/v0/")).toBe(true);
  });

  it("refuses a saved origin with a path", async () => {
    const t = await bridge({});
    const res = await t.api<{ error: { code: string } }>("PUT", "/api/tunnel", {
      publicOrigin: "https://bridge.example.org/agents",
    });
    expect(res.status).toBe(400);
    expect((await tunnelState(t)).source).toBe("local");
  });
});
