// The data plane's Koa application: one middleware hands the raw request and response to the data-plane
// listener (createDataPlane in app.ts) with ctx.respond = false, so every byte on the wire is the listener's.
import type http from "node:http";
import Koa from "koa";
import type { Logger } from "../log.js";

export interface DataPlaneShellOptions {
  /** The data-plane listener; it answers every request itself, its own failures included. */
  listener: http.RequestListener;
  log: Logger;
}

/** Socket failures of a reader that hung up while its answer was being written: not the bridge's fault. */
const READER_GONE = new Set([
  "ECONNRESET",
  "EPIPE",
  "ECONNABORTED",
  "ERR_STREAM_PREMATURE_CLOSE",
  "ERR_STREAM_DESTROYED",
]);

/**
 * A Koa app for the data-plane server. Koa sets `res.statusCode = 404` before the middleware (the listener
 * always writes its own status line) and routes nothing: the raw-target grammar stays the listener's, with
 * no router in front of it. Koa's own answer paths are unused: `ctx.respond = false` skips its response
 * writer, and the only errors it sees are the ones on-finished reports for a response in flight.
 */
export function createDataPlaneShell(options: DataPlaneShellOptions): Koa {
  const { listener, log } = options;
  // X-Forwarded-* stay untrusted: the unknown-token throttle has its own rule (request-source.ts), and
  // nothing reads ctx.ip or ctx.host.
  const app = new Koa({ proxy: false });
  // Koa's default error handler writes stacks to console.error; ours go to the operator's log instead.
  app.silent = true;
  app.on("error", (error: Error & { code?: string }) => {
    if (READER_GONE.has(error.code ?? "")) {
      log.debug("data plane reader hung up mid-answer", { code: error.code });
      return;
    }
    log.error("data plane request failed", { error: error.stack ?? String(error) });
  });
  app.use(function passToDataPlane(ctx) {
    ctx.respond = false;
    listener(ctx.req, ctx.res);
  });
  return app;
}
