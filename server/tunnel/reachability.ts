// Who can reach an Init URL with the current public origin, in one sentence for wherever an Init URL is shown
// (the Sessions page and Init prompt, `urlbridge session create`, the Tunnel page, the start-up log). Never a URL
// nobody can reach without saying so, and what to do about it.
import type { OriginState } from "./public-origin.js";

/**
 * public: an origin that is not this machine's (a tunnel, a named host) and no sign it is down.
 * tunnel_down: the origin comes from the tunnel (or a tunnel is watched) and cloudflared is not connected now.
 * this_machine: only programs on the bridge's machine can reach it (a loopback origin).
 * nobody: the container's own loopback, which not even the host reaches.
 */
export type Reach = "public" | "tunnel_down" | "this_machine" | "nobody";

export interface Reachability {
  reach: Reach;
  /** Null when the URL is public; otherwise who can reach it and what to do, in one or two sentences. */
  warning: string | null;
  /**
   * The appliance's no-tunnel mode (deploy/compose.local-data-plane.yaml: data plane on the host's loopback, no
   * tunnel watched): an expected state the operator chose, shown calmly and explained, not as a failure.
   */
  noTunnelMode: boolean;
}

export interface ReachabilityContext {
  /** The bridge is the compose appliance (server/control/session-mcp.ts runningInAppliance). */
  inAppliance: boolean;
  /** URLBRIDGE_DATA_PLANE_ON_HOST: the appliance also publishes the data plane on the host's loopback. */
  dataPlaneOnHost: boolean;
}

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

export function isLoopbackOrigin(origin: string): boolean {
  try {
    return LOOPBACK_HOST.test(new URL(origin).hostname);
  } catch {
    return false;
  }
}

const FIX_APPLIANCE =
  'Wait for the tunnel (`docker compose ps`: tunnel healthy), set a public origin on the Tunnel page, or, to try it on this machine only, publish the data plane on the host\'s loopback (README, "No tunnel yet").';
const FIX_LOCAL =
  "For a remote agent, start a tunnel to the data plane or set a public origin on the Tunnel page (or URLBRIDGE_PUBLIC_ORIGIN).";

export function describeReachability(state: OriginState, context: ReachabilityContext): Reachability {
  const reachability = describeOrigin(state, context);
  const noTunnelMode = context.inAppliance && context.dataPlaneOnHost && state.tunnel.metricsUrl === undefined;
  if (noTunnelMode && reachability.reach === "this_machine" && state.source === "local") {
    return {
      reach: "this_machine",
      noTunnelMode,
      warning: `No-tunnel mode (deploy/compose.local-data-plane.yaml, named in .env): Init URLs use ${state.origin}, which programs on this host reach and nothing else does. For a remote agent, remove the COMPOSE_FILE line from .env and run docker compose up -d once the tunnel can start, or set a public origin on the Tunnel page.`,
    };
  }
  return { ...reachability, noTunnelMode };
}

function describeOrigin(state: OriginState, context: ReachabilityContext): Omit<Reachability, "noTunnelMode"> {
  const loopback = isLoopbackOrigin(state.origin);
  if (loopback && context.inAppliance && !context.dataPlaneOnHost && state.source === "local") {
    return {
      reach: "nobody",
      warning: `Nobody can reach this Init URL: ${state.origin} is the data plane's address inside the bridge container, which not even this host reaches. ${FIX_APPLIANCE}`,
    };
  }
  if (loopback) {
    return {
      reach: "this_machine",
      warning: `Only programs on the bridge's own machine can reach this Init URL (${state.origin} is a loopback address); a remote agent cannot. ${FIX_LOCAL}`,
    };
  }
  const { tunnel } = state;
  const tunnelWatched = tunnel.metricsUrl !== undefined && tunnel.checkedAt !== undefined;
  if (state.source === "quick_tunnel" && (!tunnel.reachable || !tunnel.ready)) {
    return {
      reach: "tunnel_down",
      warning: `The tunnel is not connected right now, so nobody can reach ${state.origin} until it is (cloudflared ${tunnel.reachable ? "reports no live edge connection" : `metrics: ${tunnel.error ?? "no answer"}`}). Check \`docker compose logs tunnel\`; a quick tunnel gets a new hostname when it restarts.`,
    };
  }
  if (tunnelWatched && state.source !== "quick_tunnel" && (!tunnel.reachable || !tunnel.ready)) {
    return {
      reach: "tunnel_down",
      warning: `cloudflared reports no live edge connection, so ${state.origin} may be unreachable until it reconnects. Check \`docker compose logs tunnel\`.`,
    };
  }
  return { reach: "public", warning: null };
}
