// Decides the public origin put into Init and every exact URL: URLBRIDGE_PUBLIC_ORIGIN, then the
// operator's saved setting, then the quick-tunnel hostname from cloudflared's metrics server, else local.
import type { Logger } from "../log.js";
import type { SettingQueries } from "../store/settings.js";

export const PUBLIC_ORIGIN_SETTING = "public_origin";
const METRICS_TIMEOUT_MS = 2000;
const METRICS_POLL_MS = 5000;
/** A /quicktunnel answer is a few dozen bytes; anything longer is not cloudflared's. */
const MAX_METRICS_BODY_BYTES = 4096;
/**
 * The only hostname a quick tunnel can have: one DNS label under trycloudflare.com. The metrics server sits on
 * the tunnel's side of the trust boundary, so anything else it reports (another domain, a port, an IP) is
 * ignored: a hostile or confused metrics server must not choose the origin of every Init URL.
 */
export const QUICK_TUNNEL_HOSTNAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.trycloudflare\.com$/;
/** How much of an ignored hostname the Tunnel page shows. */
const MAX_REPORTED_HOSTNAME_CHARS = 120;

/** fetch() says only "fetch failed"; the operator needs the cause (ENOTFOUND tunnel, ECONNREFUSED, a timeout). */
function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === "TimeoutError") return `no answer within ${METRICS_TIMEOUT_MS} ms`;
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message ? cause.message : error.message;
}

export type QuickTunnelReport =
  { kind: "hostname"; hostname: string } | { kind: "none" } | { kind: "untrusted"; reported: string };

/**
 * Reads a /quicktunnel body `{"hostname":"<sub>.trycloudflare.com"}`: a trusted quick-tunnel hostname, none
 * (empty: a named tunnel, or still connecting; or not JSON), or an untrusted name, shortened for display.
 */
export function parseQuickTunnelHostname(body: string): QuickTunnelReport {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { kind: "none" };
  }
  const hostname = (parsed as { hostname?: unknown } | null)?.hostname;
  if (hostname === undefined || hostname === null || hostname === "") return { kind: "none" };
  const text = typeof hostname === "string" ? hostname : JSON.stringify(hostname);
  const lower = text.toLowerCase();
  if (QUICK_TUNNEL_HOSTNAME.test(lower)) return { kind: "hostname", hostname: lower };
  // Printable ASCII only, so the page and the log show exactly what came, and no control characters.
  const shown = text.replace(/[^\x20-\x7e]/g, "?");
  return {
    kind: "untrusted",
    reported: shown.length > MAX_REPORTED_HOSTNAME_CHARS ? `${shown.slice(0, MAX_REPORTED_HOSTNAME_CHARS)}…` : shown,
  };
}

/** The body as text, or "" (no hostname) when it is longer than a metrics answer can be. */
async function readBounded(res: Response): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > MAX_METRICS_BODY_BYTES) {
    await res.body?.cancel();
    return "";
  }
  const text = await res.text();
  return Buffer.byteLength(text, "utf8") > MAX_METRICS_BODY_BYTES ? "" : text;
}

export type OriginSource = "env" | "setting" | "quick_tunnel" | "local";

export interface TunnelStatus {
  /** cloudflared metrics server polled, if configured. */
  metricsUrl: string | undefined;
  reachable: boolean;
  /** Quick-tunnel hostname (no scheme), when the metrics server reports a trusted one (<label>.trycloudflare.com). */
  hostname: string | undefined;
  /** What the metrics server reported instead of a quick-tunnel hostname, ignored (shortened, printable). */
  untrustedHostname: string | undefined;
  /** cloudflared /ready answered 200: at least one live edge connection. */
  ready: boolean;
  error: string | undefined;
  checkedAt: number | undefined;
}

export interface OriginState {
  origin: string;
  source: OriginSource;
  envOrigin: string | undefined;
  savedOrigin: string | undefined;
  localOrigin: string;
  tunnel: TunnelStatus;
  /** One plain sentence for the operator. */
  summary: string;
}

export interface PublicOriginOptions {
  envOrigin: string | undefined;
  /** cloudflared metrics server; may also be set later with useMetrics (a cloudflared we spawned). */
  metricsUrl: string | undefined;
  settings: SettingQueries;
  log: Logger;
  fetchImpl?: typeof fetch;
}

export function normalizeOrigin(value: string): string {
  const url = new URL(value);
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("origin must be http or https");
  if (url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
    throw new Error("origin must be scheme://host[:port] with no path, query or credentials");
  }
  return url.origin;
}

export function createPublicOrigin(options: PublicOriginOptions) {
  const fetchImpl = options.fetchImpl ?? fetch;
  let localOrigin = "http://127.0.0.1:47432";
  let metricsUrl = options.metricsUrl;
  let timer: NodeJS.Timeout | undefined;
  const tunnel: TunnelStatus = {
    metricsUrl,
    reachable: false,
    hostname: undefined,
    untrustedHostname: undefined,
    ready: false,
    error: metricsUrl ? "not checked yet" : undefined,
    checkedAt: undefined,
  };

  // Read once and kept in step by save(): origin() runs on every data-plane call.
  let savedOriginCache: string | undefined = options.settings.get(PUBLIC_ORIGIN_SETTING);

  function resolve(): { origin: string; source: OriginSource } {
    if (options.envOrigin) return { origin: options.envOrigin, source: "env" };
    if (savedOriginCache) return { origin: savedOriginCache, source: "setting" };
    if (tunnel.hostname) return { origin: `https://${tunnel.hostname}`, source: "quick_tunnel" };
    return { origin: localOrigin, source: "local" };
  }

  function state(): OriginState {
    const { origin, source } = resolve();
    return {
      origin,
      source,
      envOrigin: options.envOrigin,
      savedOrigin: savedOriginCache,
      localOrigin,
      tunnel: { ...tunnel },
      summary: summarize(source),
    };
  }

  /** How the tunnel looks from here, for origins that do not come from it (a named tunnel, say). */
  function tunnelNote(): string {
    if (!tunnel.metricsUrl || tunnel.checkedAt === undefined) return "";
    if (!tunnel.reachable) return ` The cloudflared metrics server is unreachable (${tunnel.error ?? "no answer"}).`;
    return tunnel.ready
      ? " cloudflared reports a live edge connection."
      : " cloudflared reports no live edge connection yet.";
  }

  function summarize(source: OriginSource): string {
    switch (source) {
      case "env":
        return `Using URLBRIDGE_PUBLIC_ORIGIN.${tunnelNote()}`;
      case "setting":
        return `Using the origin saved in the control plane.${tunnelNote()}`;
      case "quick_tunnel":
        if (!tunnel.reachable)
          return `Using the last quick-tunnel hostname reported; the metrics server is unreachable now (${tunnel.error ?? "no answer"}).`;
        return tunnel.ready
          ? "Using the cloudflared quick tunnel; it is connected."
          : "Using the cloudflared quick tunnel; it is not ready yet.";
      case "local":
        return tunnel.metricsUrl
          ? `No tunnel hostname from ${tunnel.metricsUrl} (${tunnel.error ?? "none reported"}); Init URLs use the local data-plane origin.`
          : "No tunnel configured; Init URLs use the local data-plane origin.";
    }
  }

  async function getText(path: string): Promise<{ status: number; text: string }> {
    const res = await fetchImpl(`${metricsUrl}${path}`, { signal: AbortSignal.timeout(METRICS_TIMEOUT_MS) });
    return { status: res.status, text: await readBounded(res) };
  }

  function describeMissing(report: QuickTunnelReport, status: number): string | undefined {
    if (status !== 200) return `metrics server answered /quicktunnel with HTTP ${status}`;
    if (report.kind === "untrusted") {
      return `metrics server reported "${report.reported}", which is not a <name>.trycloudflare.com quick-tunnel hostname; ignored. For a named tunnel or your own edge, set URLBRIDGE_PUBLIC_ORIGIN or save an origin here.`;
    }
    return report.kind === "none"
      ? "metrics server reports no quick-tunnel hostname (a named tunnel, or still connecting)"
      : undefined;
  }

  async function refresh(): Promise<void> {
    if (!metricsUrl) return;
    try {
      const quick = await getText("/quicktunnel");
      const report: QuickTunnelReport = quick.status === 200 ? parseQuickTunnelHostname(quick.text) : { kind: "none" };
      const hostname = report.kind === "hostname" ? report.hostname : undefined;
      const untrustedHostname = report.kind === "untrusted" ? report.reported : undefined;
      const ready = await getText("/ready").then(
        (r) => r.status === 200,
        () => false,
      );
      if (hostname !== tunnel.hostname)
        options.log.info(hostname ? `quick tunnel hostname: ${hostname}` : "quick tunnel hostname cleared");
      if (untrustedHostname !== undefined && untrustedHostname !== tunnel.untrustedHostname) {
        options.log.warn(
          `tunnel metrics at ${metricsUrl} reported ${JSON.stringify(untrustedHostname)}, not a *.trycloudflare.com quick-tunnel hostname: ignored`,
        );
      }
      const error = describeMissing(report, quick.status);
      Object.assign(tunnel, { reachable: true, hostname, untrustedHostname, ready, error, checkedAt: Date.now() });
    } catch (error) {
      const message = describeFetchError(error);
      if (tunnel.reachable || tunnel.checkedAt === undefined)
        options.log.warn(`tunnel metrics at ${metricsUrl} unreachable: ${message}`);
      // Keep the last hostname: a metrics hiccup should not flip every Init URL to the local origin.
      Object.assign(tunnel, {
        reachable: false,
        ready: false,
        error: `unreachable: ${message}`,
        checkedAt: Date.now(),
      });
    }
  }

  return {
    state,
    origin: (): string => resolve().origin,
    setLocalOrigin(origin: string): void {
      localOrigin = origin;
    },
    save(origin: string | undefined): void {
      if (origin === undefined) options.settings.delete(PUBLIC_ORIGIN_SETTING);
      else options.settings.set(PUBLIC_ORIGIN_SETTING, normalizeOrigin(origin));
      savedOriginCache = options.settings.get(PUBLIC_ORIGIN_SETTING);
    },
    refresh,
    /** Polls this metrics server from now on (the cloudflared that `npm start` spawned). */
    useMetrics(url: string): void {
      metricsUrl = url;
      Object.assign(tunnel, {
        metricsUrl: url,
        reachable: false,
        hostname: undefined,
        untrustedHostname: undefined,
        ready: false,
        error: "not checked yet",
        checkedAt: undefined,
      });
    },
    start(intervalMs = METRICS_POLL_MS): void {
      if (!metricsUrl || timer) return;
      void refresh();
      timer = setInterval(() => void refresh(), intervalMs);
      timer.unref();
    },
    stop(): void {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

export type PublicOrigin = ReturnType<typeof createPublicOrigin>;
