// The hostile-intermediary matrix: every query rewrite plus the proxies that truncate, repeat requests
// behind the client's back, time out and retry, or redirect; and which reader can send which form.
import type { FormName } from "./forms.js";
import { type Contract, QUERY_REWRITES } from "./intermediaries.js";
import type { ProxyOptions } from "./proxy.js";
import type { ReaderName } from "./readers.js";

export interface Intermediary {
  name: string;
  description: string;
  contract: Contract;
  proxy: ProxyOptions;
  /** The reader gives up on its first attempt after this many ms and fetches the same URL again. */
  clientTimeoutMs?: number;
  /** Terminal commands sleep this long so that the hidden second request arrives while the first runs. */
  dwellMs?: number;
  /** Answers are big enough (> ~3 KiB) for truncation to bite. */
  wantsLargeAnswers?: boolean;
}

/** A reader that shows only the first ~3 KiB of an answer, as some agent URL tools do. */
export const TRUNCATE_BYTES = 3 * 1024;
const DWELL_MS = 250;

export const INTERMEDIARIES: readonly Intermediary[] = [
  ...QUERY_REWRITES.map((r) => ({
    name: r.name,
    description: r.description,
    contract: r.contract,
    proxy: { rewrite: r },
  })),
  {
    name: "truncate-3k",
    description: `cuts every answer after ${TRUNCATE_BYTES} bytes; the agent recovers through rangeFallback, /z parts and next`,
    contract: "exact",
    proxy: { truncateBytes: TRUNCATE_BYTES },
    wantsLargeAnswers: true,
  },
  {
    name: "duplicate-sequential",
    description: "sends every request twice, one after the other, and answers with the second",
    contract: "exact",
    proxy: { duplicates: { mode: "sequential", copies: 2 } },
  },
  {
    name: "duplicate-parallel",
    description: "sends every request three times at once and answers with the last",
    contract: "exact",
    proxy: { duplicates: { mode: "parallel", copies: 3 } },
    dwellMs: DWELL_MS,
  },
  {
    name: "retry-slow",
    description:
      "sends the request again when upstream has not answered within 40 ms, answers with the first to finish",
    contract: "exact",
    proxy: { retrySlowAfterMs: 40 },
    dwellMs: DWELL_MS,
  },
  {
    name: "client-timeout",
    description: "the reader gives up after 60 ms and fetches the same URL again while the first request still runs",
    contract: "exact",
    proxy: {},
    clientTimeoutMs: 60,
    dwellMs: DWELL_MS,
  },
  {
    name: "redirect",
    description: "answers 307 to /hop/<target>; the reader follows and the proxy forwards that",
    contract: "exact",
    proxy: { redirect: "follow" },
  },
  {
    name: "redirect-replay",
    description:
      "forwards the request, discards the answer, answers 307; the followed request reaches the bridge again",
    contract: "exact",
    proxy: { redirect: "forward-then-redirect" },
  },
];

export function intermediary(name: string): Intermediary {
  const found = INTERMEDIARIES.find((i) => i.name === name);
  if (!found) throw new Error(`no intermediary named ${name}`);
  return found;
}

/**
 * Which readers can send a form: WHATWG readers turn typed spaces and non-ASCII into escapes; curl and
 * raw sockets send bytes as typed, so they carry the +-for-space form (curl refuses a raw space).
 */
export const READERS_FOR_FORM: Record<FormName, readonly ReaderName[]> = {
  reference: ["fetch", "node-bytes", "curl", "chromium"],
  "agent-whatwg": ["fetch", "chromium"],
  "agent-bytes": ["node-bytes", "curl"],
  "percent-library": ["fetch", "node-bytes", "curl", "chromium"],
  "python-quote": ["fetch", "node-bytes", "curl", "chromium"],
  "form-urlencoded": ["fetch", "node-bytes", "curl", "chromium"],
  "percent-declared": ["fetch", "node-bytes", "curl", "chromium"],
};

/** Readers whose first attempt can be abandoned after a few ms (curl counts whole seconds). */
export const TIMEOUT_CAPABLE_READERS: readonly ReaderName[] = ["fetch", "node-bytes", "chromium"];
