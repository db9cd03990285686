import { describe, expect, it } from "vitest";
import type { OriginSource, OriginState, TunnelStatus } from "../../../server/tunnel/public-origin.js";
import { describeReachability, isLoopbackOrigin, type Reach } from "../../../server/tunnel/reachability.js";

const NO_TUNNEL: TunnelStatus = {
  metricsUrl: undefined,
  reachable: false,
  hostname: undefined,
  untrustedHostname: undefined,
  ready: false,
  error: undefined,
  checkedAt: undefined,
};
const WATCHED = (reachable: boolean, ready: boolean): TunnelStatus => ({
  ...NO_TUNNEL,
  metricsUrl: "http://tunnel:2000",
  reachable,
  ready,
  checkedAt: 1,
  error: reachable ? undefined : "unreachable: ENOTFOUND tunnel",
});

function state(origin: string, source: OriginSource, tunnel: TunnelStatus = NO_TUNNEL): OriginState {
  return {
    origin,
    source,
    envOrigin: undefined,
    savedOrigin: undefined,
    localOrigin: "http://127.0.0.1:47432",
    tunnel,
    summary: "",
  };
}

const appliance = { inAppliance: true, dataPlaneOnHost: false };
const published = { inAppliance: true, dataPlaneOnHost: true };
const checkout = { inAppliance: false, dataPlaneOnHost: false };

describe("describeReachability", () => {
  it.each<[string, OriginState, typeof appliance, Reach, RegExp | null]>([
    [
      "appliance, local origin, no tunnel yet",
      state("http://127.0.0.1:47432", "local", WATCHED(false, false)),
      appliance,
      "nobody",
      /Nobody can reach this Init URL.*not even this host/,
    ],
    [
      "appliance with the loopback publish and a tunnel watched",
      state("http://127.0.0.1:47432", "local", WATCHED(false, false)),
      published,
      "this_machine",
      /Only programs on the bridge's own machine/,
    ],
    [
      "checkout, local origin",
      state("http://127.0.0.1:47432", "local"),
      checkout,
      "this_machine",
      /a remote agent cannot/,
    ],
    [
      "a saved loopback origin",
      state("http://localhost:8080", "setting"),
      checkout,
      "this_machine",
      /loopback address/,
    ],
    [
      "quick tunnel connected",
      state("https://a-b.trycloudflare.com", "quick_tunnel", WATCHED(true, true)),
      appliance,
      "public",
      null,
    ],
    [
      "quick tunnel not ready",
      state("https://a-b.trycloudflare.com", "quick_tunnel", WATCHED(true, false)),
      appliance,
      "tunnel_down",
      /not connected right now.*no live edge connection/,
    ],
    [
      "quick tunnel metrics gone",
      state("https://a-b.trycloudflare.com", "quick_tunnel", WATCHED(false, false)),
      appliance,
      "tunnel_down",
      /ENOTFOUND tunnel/,
    ],
    [
      "named origin, tunnel not connected",
      state("https://agents.example.com", "env", WATCHED(true, false)),
      appliance,
      "tunnel_down",
      /may be unreachable until it reconnects/,
    ],
    ["named origin, no tunnel watched", state("https://agents.example.com", "setting"), checkout, "public", null],
  ])("%s", (_name, origin, context, reach, warning) => {
    const result = describeReachability(origin, context);
    expect(result.reach).toBe(reach);
    if (warning) expect(result.warning).toMatch(warning);
    else expect(result.warning).toBeNull();
  });

  it("calls the appliance's no-tunnel mode by its name and says how to leave it, only when no tunnel is watched", () => {
    const mode = describeReachability(state("http://127.0.0.1:47432", "local"), published);
    expect(mode).toMatchObject({ reach: "this_machine", noTunnelMode: true });
    expect(mode.warning).toMatch(
      /^No-tunnel mode \(deploy\/compose\.local-data-plane\.yaml.*remove the COMPOSE_FILE line/,
    );
    expect(mode.warning).not.toContain("`");
    const watched = describeReachability(state("http://127.0.0.1:47432", "local", WATCHED(false, false)), published);
    expect(watched.noTunnelMode).toBe(false);
    expect(describeReachability(state("http://127.0.0.1:47432", "local"), checkout).noTunnelMode).toBe(false);
    const named = describeReachability(state("https://agents.example.com", "setting"), published);
    expect(named).toMatchObject({ reach: "public", warning: null, noTunnelMode: true });
  });

  it.each([
    ["http://127.0.0.1:47432", true],
    ["http://127.1.2.3", true],
    ["http://localhost:1", true],
    ["http://[::1]:47432", true],
    ["https://127.0.0.1.nip.io", false],
    ["https://bridge.example.com", false],
  ])("isLoopbackOrigin(%s) is %s", (origin, expected) => {
    expect(isLoopbackOrigin(origin)).toBe(expected);
  });
});
