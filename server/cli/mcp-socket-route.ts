// Which leg the stdio relay's next line takes: the socket leg while it is open (mcp-socket-leg.ts), HTTP otherwise.
// A leg that could not open, or whose connection was lost (a bridge restart or upgrade), is opened again when a
// line arrives, at most once per backoff interval (REOPEN_MIN_MS doubling to REOPEN_MAX_MS, back to the least once
// a leg opens). Lines never wait for it: the line that starts an attempt, and every one during it, goes over HTTP.
// The lines in flight on a lost connection were answered with an error by that leg and are not sent again.
import { openSocketLeg, type JsonRpcId, type Reinitialize, type SocketLegOptions } from "./mcp-socket-leg.js";

/** The first wait between attempts to reopen the socket leg; it doubles after each failed one. */
export const REOPEN_MIN_MS = 500;
/** The longest wait between attempts. */
export const REOPEN_MAX_MS = 30_000;

export interface SocketRouteOptions extends SocketLegOptions {
  /** The client's 2025-era initialize once it was answered: a new connection replays it. */
  reinitialize: () => Reinitialize | undefined;
}

export interface SocketRoute {
  /** Sends one client line over the socket when a leg is open, else over HTTP; resolves once it is answered. */
  send(text: string, message: unknown, ids: JsonRpcId[]): Promise<void>;
  close(): void;
}

export async function openSocketRoute(options: SocketRouteOptions): Promise<SocketRoute> {
  let leg = await openSocketLeg(options);
  let interval = REOPEN_MIN_MS;
  let nextAttempt = 0;
  let opening: Promise<void> | undefined;
  let closed = false;
  const stop = new AbortController();
  const failed = () => {
    nextAttempt = Date.now() + interval;
    interval = Math.min(interval * 2, REOPEN_MAX_MS);
  };
  if (!leg) failed();

  const reopen = () => {
    opening = openSocketLeg(options, options.reinitialize(), stop.signal).then((fresh) => {
      opening = undefined;
      if (closed) return fresh?.close();
      if (fresh) {
        leg = fresh;
        interval = REOPEN_MIN_MS;
        nextAttempt = 0;
        return;
      }
      failed();
    });
  };

  return {
    send(text, message, ids) {
      // A leg the bridge moved to HTTP (its tool list changed) is not lost: it sends that way itself.
      if (leg && !leg.lost) return leg.send(text, message, ids);
      if (!opening && Date.now() >= nextAttempt) {
        // The first attempt after a loss at once; after a failed one, once the interval has passed.
        leg = undefined;
        reopen();
      }
      return options.viaHttp(text, message);
    },
    close() {
      closed = true;
      stop.abort();
      leg?.close();
    },
  };
}
