// Response range replay: every served response is kept briefly so a reader that truncated it can
// fetch it again in small UTF-8-safe parts, without re-running anything.
import { randomBytes } from "node:crypto";

export const RANGE_PART_BYTES = 2304;
export const MAX_SNAPSHOTS_PER_SESSION = 96;
export const MAX_SNAPSHOT_BYTES_PER_SESSION = 2 * 1024 * 1024;
export const SNAPSHOT_IDLE_TTL_MS = 15 * 60 * 1000;
export const RANGE_METADATA_PREFIX = "URLBRIDGE_RANGE ";

interface Snapshot {
  id: string;
  body: Buffer;
  lastUsed: number;
}

export class ResponseSnapshots {
  private readonly entries = new Map<string, Snapshot>();
  private totalBytes = 0;
  private lastId: string | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  // Ids only need to be unique within this session's snapshots (the capability is the secret), so a
  // per-store random prefix plus a counter replaces a crypto call on every response.
  private readonly idPrefix = randomBytes(3).toString("base64url");
  private counter = 0;

  newId(): string {
    this.counter += 1;
    return `${this.idPrefix}${this.counter.toString(36)}`;
  }

  /** Stores a serialized response under id and makes it the last=1 target. */
  add(id: string, body: Buffer): void {
    this.expire();
    if (body.length > MAX_SNAPSHOT_BYTES_PER_SESSION) return;
    this.entries.set(id, { id, body, lastUsed: this.now() });
    this.totalBytes += body.length;
    this.lastId = id;
    while (this.entries.size > MAX_SNAPSHOTS_PER_SESSION || this.totalBytes > MAX_SNAPSHOT_BYTES_PER_SESSION) {
      const oldest = this.entries.keys().next().value as string;
      this.remove(oldest);
    }
  }

  get(id: string): Buffer | undefined {
    this.expire();
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    entry.lastUsed = this.now();
    // keep insertion order = least recently used first
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry.body;
  }

  last(): { id: string; body: Buffer } | undefined {
    if (!this.lastId) return undefined;
    const body = this.get(this.lastId);
    return body ? { id: this.lastId, body } : undefined;
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  private remove(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.totalBytes -= entry.body.length;
    if (this.lastId === id) this.lastId = undefined;
  }

  /** Entries are kept least recently used first, so expiry stops at the first fresh one. */
  private expire(): void {
    const cutoff = this.now() - SNAPSHOT_IDLE_TTL_MS;
    for (const [id, entry] of this.entries) {
      if (entry.lastUsed >= cutoff) break;
      this.remove(id);
    }
  }
}

const isContinuation = (b: number | undefined) => b !== undefined && (b & 0xc0) === 0x80;

/** Moves a byte offset back to the start of the UTF-8 character it falls in. */
export function alignToCharStart(body: Buffer, offset: number): number {
  let o = Math.max(0, Math.min(offset, body.length));
  while (o > 0 && o < body.length && isContinuation(body[o])) o -= 1;
  return o;
}

/** Part boundaries: parts of at most RANGE_PART_BYTES that never split a UTF-8 character. */
export function partBoundaries(body: Buffer): Array<[number, number]> {
  const parts: Array<[number, number]> = [];
  let start = 0;
  while (start < body.length) {
    let end = Math.min(start + RANGE_PART_BYTES, body.length);
    if (end < body.length) {
      const aligned = alignToCharStart(body, end);
      end = aligned > start ? aligned : end;
    }
    parts.push([start, end]);
    start = end;
  }
  if (parts.length === 0) parts.push([0, 0]);
  return parts;
}

export interface RangeSlice {
  offset: number;
  length: number;
  part?: number;
  parts: number;
  hasMore: boolean;
}

export function sliceByPart(body: Buffer, part: number): RangeSlice | undefined {
  const parts = partBoundaries(body);
  const bounds = parts[part];
  if (!bounds) return undefined;
  return {
    offset: bounds[0],
    length: bounds[1] - bounds[0],
    part,
    parts: parts.length,
    hasMore: part + 1 < parts.length,
  };
}

export function sliceByOffset(body: Buffer, offset: number, length: number): RangeSlice | undefined {
  if (offset > body.length) return undefined;
  const start = alignToCharStart(body, offset);
  let end = Math.min(body.length, offset + length);
  end = end < body.length ? alignToCharStart(body, end) : end;
  if (end <= start && start < body.length) {
    // the requested window is inside one character: widen to that whole character
    end = start + 1;
    while (end < body.length && isContinuation(body[end])) end += 1;
  }
  return { offset: start, length: end - start, parts: partBoundaries(body).length, hasMore: end < body.length };
}
