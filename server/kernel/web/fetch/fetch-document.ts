// Follows one URL to its document: every hop (the first and each redirect) is checked by the guard before any
// connection, redirects are followed by hand up to MAX_WEB_REDIRECTS, and the whole walk shares one deadline.
import type http from "node:http";
import { ErrorCode, isToolError, ToolError } from "../../../errors.js";
import { checkWebUrl } from "../guard/target.js";
import { vetTarget, type WebGuard } from "../guard/vet.js";
import { MAX_WEB_REDIRECTS } from "../limits.js";
import { getOnce, networkError } from "./http-get.js";

export interface FetchedDocument {
  /** Where the body came from, after redirects. */
  url: URL;
  host: string;
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
  redirects: number;
}

export interface FetchDocumentOptions {
  guard: WebGuard;
  timeoutMs: number;
  maxBytes: number;
  accept: string;
  /** The bridge's shutdown signal. */
  signal: AbortSignal;
}

export async function fetchDocument(start: URL, options: FetchDocumentOptions): Promise<FetchedDocument> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([options.signal, deadline]);
  let url = start;
  for (let hop = 0; ; hop++) {
    // The system resolver can take its own time (retries, unreachable servers): the call's deadline bounds it too.
    const target = await untilAborted(vetTarget(url, options.guard), signal, () =>
      timeoutOrShutdown(deadline, options.timeoutMs, url.hostname),
    );
    if (signal.aborted) throw timeoutOrShutdown(deadline, options.timeoutMs, target.host);
    let response;
    try {
      response = await getOnce(target, { signal, maxBytes: options.maxBytes, accept: options.accept });
    } catch (error) {
      if (isToolError(error)) throw error;
      if (signal.aborted) throw timeoutOrShutdown(deadline, options.timeoutMs, target.host);
      throw networkError(error, target.host);
    }
    if (response.location === undefined) {
      return {
        url,
        host: target.host,
        status: response.status,
        headers: response.headers,
        body: response.body,
        truncated: response.truncated,
        redirects: hop,
      };
    }
    if (hop >= MAX_WEB_REDIRECTS) {
      throw new ToolError(
        ErrorCode.webTooManyRedirects,
        `${start.href.slice(0, 200)} redirected more than ${MAX_WEB_REDIRECTS} times; fetch the last URL yourself if it is the one you want.`,
        {
          detail: { limit: MAX_WEB_REDIRECTS, last: redactedUrl(url) },
        },
      );
    }
    let next: URL;
    try {
      next = new URL(response.location, url);
    } catch {
      throw new ToolError(ErrorCode.webFetchFailed, `${target.host} redirected to a Location that is not a URL.`, {
        detail: { host: target.host, code: "bad_location" },
        retryable: false,
      });
    }
    // The next hop is a new target: scheme and credentials checked, then the guard again (vetTarget above).
    url = checkWebUrl(next);
  }
}

function untilAborted<T>(work: Promise<T>, signal: AbortSignal, reason: () => ToolError): Promise<T> {
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason());
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function timeoutOrShutdown(deadline: AbortSignal, timeoutMs: number, host: string): ToolError {
  if (!deadline.aborted)
    return new ToolError(ErrorCode.webFetchFailed, "The bridge is shutting down; try again once it is back.", {
      detail: { host, code: "shutdown" },
      retryable: true,
    });
  return new ToolError(
    ErrorCode.webTimeout,
    `${host} did not answer within ${Math.round(timeoutMs / 1000)} s. Try again, or raise timeout (seconds).`,
    { detail: { host, timeoutMs } },
  );
}

/** A URL without its query string, for errors. */
function redactedUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`.slice(0, 200);
}
