// One GET to one checked address: node:http(s) with a `lookup` that answers only the address the guard vetted
// (no second DNS query), no connection reuse, no proxy, decompression bounded by decoded and wire bytes.
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import zlib from "node:zlib";
import { ErrorCode, ToolError } from "../../../errors.js";
import type { VettedTarget } from "../guard/vet.js";
import { MAX_WEB_WIRE_BYTES } from "../limits.js";

export const WEB_USER_AGENT =
  "urlbridge-webfetch/0 (+https://github.com/urlbridge; an AI coding agent's fetch through urlbridge)";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface HopResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Set for a redirect: the Location header as sent (resolved against the hop's URL by the caller). */
  location?: string;
  body: Buffer;
  /** The decoded body went past maxBytes and was cut there. */
  truncated: boolean;
}

export interface HopOptions {
  signal: AbortSignal;
  /** Decoded bytes kept; more are not read. */
  maxBytes: number;
  accept: string;
}

/** The lookup the socket uses: whatever name it is asked for, the vetted address (with or without `all`). */
function pinnedLookup(target: VettedTarget): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
}

const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|SSL/;

export function networkError(error: unknown, host: string): ToolError {
  const code = (error as NodeJS.ErrnoException).code ?? "error";
  const tls = TLS_CODES.test(code);
  return new ToolError(
    ErrorCode.webFetchFailed,
    tls
      ? `${host}'s TLS certificate is not trusted (${code}); webfetch does not skip certificate checks.`
      : `Could not fetch from ${host} (${code}). Try again later, or another URL.`,
    { detail: { host, code, ...(tls ? { tls: true } : {}) }, retryable: !tls },
  );
}

function decoderFor(encoding: string | undefined): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined {
  switch ((encoding ?? "").trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return zlib.createGunzip();
    case "deflate":
      return zlib.createInflate();
    case "br":
      return zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

export function getOnce(target: VettedTarget, options: HopOptions): Promise<HopResponse> {
  const client = target.url.protocol === "https:" ? https : http;
  return new Promise<HopResponse>((resolve, reject) => {
    let settled = false;
    const onAbort = () => fail(options.signal.reason);
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      options.signal.removeEventListener("abort", onAbort);
      req.destroy();
      reject(error);
    };
    const succeed = (response: HopResponse) => {
      settled = true;
      options.signal.removeEventListener("abort", onAbort);
      resolve(response);
    };
    const req = client.request(target.url, {
      method: "GET",
      agent: false,
      lookup: pinnedLookup(target),
      signal: options.signal,
      headers: {
        "user-agent": WEB_USER_AGENT,
        accept: options.accept,
        "accept-encoding": "gzip, deflate, br",
        "accept-language": "en;q=0.9, *;q=0.5",
        connection: "close",
      },
    });
    if (options.signal.aborted) return fail(options.signal.reason);
    options.signal.addEventListener("abort", onAbort, { once: true });
    req.on("error", fail);
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (REDIRECT_STATUSES.has(status) && typeof location === "string") {
        succeed({ status, headers: res.headers, location, body: Buffer.alloc(0), truncated: false });
        res.destroy();
        req.destroy();
        return;
      }
      const decoder = decoderFor(res.headers["content-encoding"]);
      const chunks: Buffer[] = [];
      let kept = 0;
      let wire = 0;
      const finish = (truncated: boolean) => {
        if (settled) return;
        succeed({ status, headers: res.headers, body: Buffer.concat(chunks, kept), truncated });
        res.destroy();
        decoder?.destroy();
      };
      const take = (chunk: Buffer) => {
        if (settled) return;
        const room = options.maxBytes - kept;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          kept += room;
          finish(true);
          return;
        }
        chunks.push(chunk);
        kept += chunk.length;
      };
      res.on("data", (chunk: Buffer) => {
        wire += chunk.length;
        if (wire > MAX_WEB_WIRE_BYTES) finish(true);
      });
      res.on("error", fail);
      // A body cut off mid-way (the server closed, the socket failed) ends without "end": fail rather than hang.
      res.on("close", () => {
        if (!res.complete)
          fail(Object.assign(new Error("the connection closed before the body ended"), { code: "ECONNRESET" }));
      });
      if (decoder) {
        decoder.on("data", take);
        decoder.on("end", () => finish(false));
        decoder.on("error", (error) =>
          fail(
            new ToolError(
              ErrorCode.webFetchFailed,
              `${target.host} sent a body that does not decompress (${res.headers["content-encoding"]}).`,
              {
                detail: { host: target.host, code: (error as NodeJS.ErrnoException).code ?? "bad_encoding" },
                retryable: false,
              },
            ),
          ),
        );
        res.pipe(decoder);
      } else {
        res.on("data", take);
        res.on("end", () => finish(false));
      }
    });
    req.end();
  });
}
