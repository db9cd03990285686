// How to stage content that does not fit one URL: a chunk count and size that fit both ceilings a chunk
// meets on its way in (its content travels as raw=, its URL must stay under the request-target limit), so
// the advice in raw_too_long, request_target_too_long and staged_chunk_too_large costs the fewest /s calls.
import { mayReadTildeLiterally } from "./decoding-tilde.js";
import { MAX_RAW_BYTES, MAX_REQUEST_TARGET_BYTES } from "./limits.js";

/** Room a /s URL needs besides its chunk: origin, capability, route and blob/i/count parameters. */
const STAGE_URL_OVERHEAD_BYTES = 512;

export interface StagingPlan {
  /** Chunks to stage (count=). */
  count: number;
  /** Content bytes per chunk when split evenly (the last may be shorter). */
  chunkBytes: number;
}

/**
 * `contentBytes`: the content's UTF-8 size; `sentBytes`: its size as the client sent it (percent and tilde
 * escapes included), which the request-target limit counts. Even chunks, as few as both limits allow.
 */
export function stagingPlan(contentBytes: number, sentBytes: number = contentBytes): StagingPlan {
  const byContent = Math.ceil(contentBytes / MAX_RAW_BYTES);
  const bySent = Math.ceil(sentBytes / (MAX_REQUEST_TARGET_BYTES - STAGE_URL_OVERHEAD_BYTES));
  const count = Math.max(1, byContent, bySent);
  return { count, chunkBytes: Math.ceil(contentBytes / count) };
}

/**
 * An upper bound on the content bytes a sent (still encoded) text carries: %XX is one byte, ~n ~r ~t ~h ~p ~q
 * ~s ~a ~~ one unless the text could be read with literal ~ (decoding-tilde.ts), anything else (~u escapes
 * included: a lone surrogate stays verbatim) counts as itself. For a URL refused before it is parsed.
 */
export function contentBytesAtMost(sent: string): number {
  const oneByteEscapes = mayReadTildeLiterally(sent) ? NO_ESCAPES : ONE_BYTE_ESCAPES;
  let bytes = 0;
  let i = 0;
  while (i < sent.length) {
    const c = sent[i]!;
    if (c === "%" && /^[0-9A-Fa-f]{2}$/.test(sent.slice(i + 1, i + 3))) {
      bytes += 1;
      i += 3;
    } else if (c === "~" && oneByteEscapes.has(sent[i + 1] ?? "")) {
      bytes += 1;
      i += 2;
    } else {
      const code = sent.codePointAt(i)!;
      bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
      i += code < 0x10000 ? 1 : 2;
    }
  }
  return bytes;
}

const ONE_BYTE_ESCAPES = new Set("nrthpqsa~");
const NO_ESCAPES = new Set<string>();

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1).replace(/\.0$/, "")} KiB`;

/** The sentence an error carries: how many chunks, how large, and the two URLs that stage and consume them. */
export function stagingAdvice(plan: StagingPlan): string {
  const { count, chunkBytes } = plan;
  return (
    `Stage it in ${count} chunk${count === 1 ? "" : "s"} of ~${kib(chunkBytes)} (a chunk holds up to ${kib(MAX_RAW_BYTES)} and its URL up to ${kib(MAX_REQUEST_TARGET_BYTES)}): ` +
    `/s?blob=<id>&i=<0..${count - 1}>&count=${count}&raw=<chunk> on the mutation base, then pass blob=<id>&count=${count} instead of raw=.`
  );
}
