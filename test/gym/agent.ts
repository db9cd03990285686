// The agent's side of a gym case: fetch a URL through a reader and an intermediary, recover an answer
// the intermediary cut short (rangeFallback, /z parts and their next URLs), and poll unfinished intents.
import type { Reader } from "./readers.js";

export interface AgentOptions {
  reader: Reader;
  /** Origin the bridge puts in the URLs it hands out; replaced by the intermediary's, as a tunnel would. */
  bridgeOrigin: string;
  viaOrigin: string;
  timeoutMs: number;
  /** Give up on the first attempt after this many ms and fetch the same URL again, as a reader retrying a timeout. */
  clientTimeoutMs?: number;
}

export interface AgentAnswer {
  body: Record<string, unknown>;
  /** How many URLs the agent fetched for this answer (retries, range parts, polls included). */
  fetches: number;
  recoveredByRange: boolean;
}

const MAX_POLLS = 40;
const MAX_RANGE_PARTS = 200;
const RANGE_LINE = /^URLBRIDGE_RANGE (\{.*\})\n/;
const FALLBACK = /^\{"rangeFallback":(\{[^{}]*\})/;

export class GymAgent {
  private fetches = 0;

  constructor(private readonly options: AgentOptions) {}

  /** Fetches a bridge URL and returns the parsed answer, recovering truncation and following poll. */
  async call(url: string): Promise<AgentAnswer> {
    this.fetches = 0;
    let recovered = false;
    let { body, recoveredByRange } = await this.fetchJson(url, this.options.clientTimeoutMs);
    recovered ||= recoveredByRange;
    for (let polls = 0; isUnfinished(body) && polls < MAX_POLLS; polls++) {
      ({ body, recoveredByRange } = await this.fetchJson(String(body.poll)));
      recovered ||= recoveredByRange;
    }
    return { body, fetches: this.fetches, recoveredByRange: recovered };
  }

  private via(url: string): string {
    return url.startsWith(this.options.bridgeOrigin)
      ? `${this.options.viaOrigin}${url.slice(this.options.bridgeOrigin.length)}`
      : url;
  }

  private async fetchText(url: string, timeoutMs = this.options.timeoutMs): Promise<string> {
    this.fetches += 1;
    try {
      const res = await this.options.reader.get(this.via(url), timeoutMs);
      return res.body;
    } catch (error) {
      if (timeoutMs === this.options.timeoutMs) throw error;
      // The reader gave up (client timeout): the agent fetches the same URL again.
      return this.fetchText(url);
    }
  }

  private async fetchJson(
    url: string,
    timeoutMs?: number,
  ): Promise<{ body: Record<string, unknown>; recoveredByRange: boolean }> {
    const text = await this.fetchText(url, timeoutMs);
    try {
      return { body: JSON.parse(text) as Record<string, unknown>, recoveredByRange: false };
    } catch {
      const fallback = FALLBACK.exec(text)?.[1];
      if (!fallback) throw new Error(`unparseable answer and no rangeFallback: ${JSON.stringify(text.slice(0, 200))}`);
      const { first, resume } = JSON.parse(fallback) as { first: string; resume?: string };
      if (resume === undefined)
        return { body: JSON.parse(await this.replay(first)) as Record<string, unknown>, recoveredByRange: true };
      // Keep what the cut answer already showed (less a character the cut split, which the reader shows as
      // U+FFFD) and fetch only the rest, from that byte on.
      const held = Buffer.from(text.replace(/\uFFFD$/, ""), "utf8");
      const rest = await this.replay(`${resume}${held.length}`, held.length);
      return {
        body: JSON.parse(Buffer.concat([held, rest]).toString("utf8")) as Record<string, unknown>,
        recoveredByRange: true,
      };
    }
  }

  /**
   * Reassembles a stored response from its /z parts, following each part's exact next URL. With `from`, the
   * bytes from that offset on (a part may start a little earlier, at a character start: the overlap is dropped).
   */
  private async replay(firstUrl: string): Promise<string>;
  private async replay(firstUrl: string, from: number): Promise<Buffer>;
  private async replay(firstUrl: string, from?: number): Promise<string | Buffer> {
    const parts: Buffer[] = [];
    let next: string | undefined = firstUrl;
    let at = from ?? 0;
    for (let i = 0; next && i < MAX_RANGE_PARTS; i++) {
      const text = await this.fetchText(next);
      const meta = RANGE_LINE.exec(text);
      if (!meta) throw new Error(`range part without metadata: ${JSON.stringify(text.slice(0, 200))}`);
      const info = JSON.parse(meta[1]!) as { hasMore: boolean; next?: string; offset: number };
      const chunk = Buffer.from(text.slice(meta[0].length), "utf8").subarray(Math.max(0, at - info.offset));
      parts.push(chunk);
      at = Math.max(at, info.offset) + chunk.length;
      next = info.hasMore ? info.next : undefined;
    }
    const all = Buffer.concat(parts);
    return from === undefined ? all.toString("utf8") : all;
  }
}

function isUnfinished(body: Record<string, unknown>): boolean {
  return (body.state === "pending" || body.state === "running") && typeof body.poll === "string";
}
