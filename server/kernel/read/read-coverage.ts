// Read coverage: which byte ranges of which file a session has seen, per content fingerprint.
// /r records it; /w may replace an existing file only when the current fingerprint is fully covered.
import crypto from "node:crypto";
import { sessionSlot } from "../tool/session-state.js";

// crypto.hash (Node 20.12+) is the one-shot form: no Hash stream object per call.
const sha256Hex: (bytes: Buffer) => string =
  typeof crypto.hash === "function"
    ? (bytes) => crypto.hash("sha256", bytes, "hex")
    : (bytes) => crypto.createHash("sha256").update(bytes).digest("hex");

export function fingerprintBytes(bytes: Buffer): string {
  return sha256Hex(bytes).slice(0, 32);
}

/** Below this, hashing on the event loop (~3 µs a KiB) costs less than a thread-pool round trip. */
const POOL_HASH_MIN_BYTES = 256 * 1024;

/**
 * The whole SHA-256 (hex) whose first 32 digits are fingerprintBytes, off the event loop for a large buffer:
 * WebCrypto's digest runs in the thread pool, so a 10 MB file's hash (~30 ms) does not hold other sessions' calls
 * (issue 34). The review record keys contents by the whole value (store/changes.ts contentHash).
 */
export async function sha256HexAsync(bytes: Buffer): Promise<string> {
  if (bytes.length < POOL_HASH_MIN_BYTES) return sha256Hex(bytes);
  return Buffer.from(await crypto.webcrypto.subtle.digest("SHA-256", bytes)).toString("hex");
}

interface FileCoverage {
  fingerprint: string;
  size: number;
  /** Sorted, merged [start, end) byte ranges. */
  ranges: Array<[number, number]>;
}

export class ReadCoverage {
  private readonly files = new Map<string, FileCoverage>();

  /** Records that bytes [start, end) of the file with this fingerprint and size were returned to the agent. */
  record(absolutePath: string, fingerprint: string, size: number, start: number, end: number): void {
    let entry = this.files.get(absolutePath);
    if (!entry || entry.fingerprint !== fingerprint) {
      // Content changed since the last read: earlier pages no longer count.
      entry = { fingerprint, size, ranges: [] };
      this.files.set(absolutePath, entry);
    }
    const range: [number, number] = [Math.max(0, start), Math.min(size, end)];
    if (range[1] <= range[0]) return;
    // The usual cases, a first read and a re-read of what was already seen, need no merge.
    if (entry.ranges.length === 0) entry.ranges = [range];
    else if (!entry.ranges.some(([s, e]) => s <= range[0] && range[1] <= e))
      entry.ranges = mergeRanges([...entry.ranges, range]);
  }

  /** True when every byte of the file with this fingerprint has been returned. */
  isComplete(absolutePath: string, fingerprint: string): boolean {
    const entry = this.files.get(absolutePath);
    if (!entry || entry.fingerprint !== fingerprint) return false;
    if (entry.size === 0) return true;
    const first = entry.ranges[0];
    return entry.ranges.length === 1 && first !== undefined && first[0] === 0 && first[1] >= entry.size;
  }

  /** Byte ranges not yet seen for this fingerprint (the whole file when unknown). */
  missing(absolutePath: string, fingerprint: string, size: number): Array<[number, number]> {
    const entry = this.files.get(absolutePath);
    if (!entry || entry.fingerprint !== fingerprint) return size > 0 ? [[0, size]] : [];
    const gaps: Array<[number, number]> = [];
    let cursor = 0;
    for (const [s, e] of entry.ranges) {
      if (s > cursor) gaps.push([cursor, s]);
      cursor = Math.max(cursor, e);
    }
    if (cursor < size) gaps.push([cursor, size]);
    return gaps;
  }

  /** Any mutation of a file invalidates what was read of it. */
  invalidate(absolutePath: string): void {
    this.files.delete(absolutePath);
  }
}

function mergeRanges(ranges: Array<[number, number]>): Array<[number, number]> {
  const sorted = ranges.filter(([s, e]) => e > s).sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

/** What this session has read: `readCoverage.of(ctx.state)`. */
export const readCoverage = sessionSlot(() => new ReadCoverage());
