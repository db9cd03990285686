// The line index and fingerprint of a large UTF-8 file, built once per version of the file by a scan that reads
// it through the thread pool in chunks (other calls are answered between chunks) and kept in a cache bounded
// by size, so a page of a large file costs its own bytes, not the file's (issue 34).
import { isUtf8 } from "node:buffer";
import crypto from "node:crypto";
import fs from "node:fs";
import { newlineStyleOf } from "../../text/detect.js";
import type { LineIndex } from "../../text/index.js";
import { LARGE_FILE_SCAN_CHUNK_BYTES, MAX_INDEXED_LINES, MAX_LINE_INDEX_CACHE_BYTES } from "../limits.js";

/** What identifies one version of a file: any write changes size, mtime or ctime (ctime cannot be set back). */
export interface FileVersion {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

export function versionOf(fd: number): FileVersion {
  const s = fs.fstatSync(fd, { bigint: true });
  return { dev: s.dev, ino: s.ino, size: s.size, mtimeNs: s.mtimeNs, ctimeNs: s.ctimeNs };
}

export function sameVersion(a: FileVersion, b: FileVersion): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** A UTF-8 file (with or without a BOM) as /r pages it: offsets are into the file less its BOM. */
export interface LargeFileFacts {
  version: FileVersion;
  size: number;
  /** fingerprintBytes of the whole file (read-coverage.ts): the same value a whole-file read gives. */
  fingerprint: string;
  bomBytes: 0 | 3;
  invalidUtf8: boolean;
  index: LineIndex;
}

/** A scan's outcome: the facts, or why the file is not paged by range (binary, UTF-16/32, changed meanwhile). */
export type LargeFileScan =
  { kind: "text"; facts: LargeFileFacts } | { kind: "not_utf8" } | { kind: "too_many_lines" } | { kind: "changed" };

/**
 * Timestamps are coarse (a kernel tick): a file changed within this margin of a scan could change again without
 * its ctime moving, so its facts are used for that call only and never cached (git's "racily clean" rule).
 */
export const RACY_MARGIN_NS = 2_000_000_000n;
/** Bytes an index entry costs beyond its line starts (the object, the fingerprint, the key). */
const ENTRY_OVERHEAD_BYTES = 512;

const LF = 0x0a;
const CR = 0x0d;

function readChunk(fd: number, buffer: Buffer, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) =>
    fs.read(fd, buffer, 0, length, position, (error, n) => (error ? reject(error) : resolve(n))),
  );
}

/** Length of the UTF-8 sequence a lead byte opens (1 for a byte that cannot lead: it is invalid on its own). */
function sequenceLength(lead: number): number {
  if (lead < 0xc0) return 1;
  if (lead < 0xe0) return 2;
  if (lead < 0xf0) return 3;
  return lead < 0xf8 ? 4 : 1;
}

/** Where an unfinished UTF-8 sequence at the end of `bytes` starts (bytes.length when none is unfinished). */
function unfinishedTail(bytes: Buffer): number {
  for (let j = bytes.length - 1; j >= Math.max(0, bytes.length - 4); j--) {
    if ((bytes[j]! & 0xc0) === 0x80) continue;
    return j + sequenceLength(bytes[j]!) > bytes.length ? j : bytes.length;
  }
  return bytes.length;
}

/**
 * Reads an open file from its start in chunks, hashing it, indexing its lines and checking its UTF-8, with its
 * version taken before and checked after (a version that moved meanwhile answers "changed").
 */
export async function scanLargeFile(fd: number): Promise<LargeFileScan> {
  const version = versionOf(fd);
  const size = Number(version.size);
  const hash = crypto.createHash("sha256");
  const chunk = Buffer.allocUnsafe(Math.min(LARGE_FILE_SCAN_CHUNK_BYTES, Math.max(size, 1)));
  const starts: number[] = [];
  let bomBytes: 0 | 3 = 0;
  let invalid = false;
  let carry: Buffer = Buffer.alloc(0);
  let lf = 0;
  let crlf = 0;
  let cr = 0;
  let previous = -1;
  let position = 0;
  while (position < size) {
    const n = await readChunk(fd, chunk, Math.min(chunk.length, size - position), position);
    if (n === 0) return { kind: "changed" };
    const bytes = chunk.subarray(0, n);
    if (position === 0) {
      if (bytes[0] === 0xff || bytes[0] === 0xfe || (bytes[0] === 0 && bytes[1] === 0)) return { kind: "not_utf8" };
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bomBytes = 3;
      if (size - bomBytes > 0) starts.push(0);
    }
    // A NUL makes the file binary, or BOM-less UTF-16: the whole-file path tells which (detect.ts).
    if (bytes.indexOf(0) !== -1) return { kind: "not_utf8" };
    hash.update(bytes);
    if (previous === CR && bytes[0] !== LF) cr++;
    for (let i = bytes.indexOf(LF); i !== -1; i = bytes.indexOf(LF, i + 1)) {
      if ((i > 0 ? bytes[i - 1] : previous) === CR) crlf++;
      else lf++;
      const next = position + i + 1;
      if (next < size) starts.push(next - bomBytes);
      if (starts.length > MAX_INDEXED_LINES) return { kind: "too_many_lines" };
    }
    for (let i = bytes.indexOf(CR); i !== -1 && i + 1 < n; i = bytes.indexOf(CR, i + 1)) if (bytes[i + 1] !== LF) cr++;
    if (!invalid) {
      const joined = carry.length > 0 ? Buffer.concat([carry, bytes]) : bytes;
      const tail = unfinishedTail(joined);
      invalid = !isUtf8(joined.subarray(0, tail));
      carry = Buffer.from(joined.subarray(tail));
    }
    previous = bytes[n - 1]!;
    position += n;
  }
  if (previous === CR) cr++;
  if (carry.length > 0) invalid = true;
  if (!sameVersion(version, versionOf(fd))) return { kind: "changed" };
  const index: LineIndex = { starts, length: size - bomBytes, newline: newlineStyleOf({ lf, crlf, cr }) };
  const fingerprint = hash.digest("hex").slice(0, 32);
  return { kind: "text", facts: { version, size, fingerprint, bomBytes, invalidUtf8: invalid, index } };
}

function costOf(facts: LargeFileFacts): number {
  return facts.index.starts.length * 8 + ENTRY_OVERHEAD_BYTES;
}

function keyOf(version: FileVersion): string {
  return `${version.dev}:${version.ino}`;
}

/** Facts per file (device and inode), each valid for the one version it was built from; least recently used go first. */
export class LargeFileIndexCache {
  private readonly entries = new Map<string, LargeFileFacts>();
  private readonly scans = new Map<string, Promise<LargeFileScan>>();
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly racyMarginNs = RACY_MARGIN_NS,
  ) {}

  /** Cached facts for the version `fd` has now, or a scan (shared by calls that ask for the same version meanwhile). */
  async obtain(fd: number): Promise<LargeFileScan> {
    const version = versionOf(fd);
    const key = keyOf(version);
    const cached = this.entries.get(key);
    if (cached && sameVersion(cached.version, version)) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      return { kind: "text", facts: cached };
    }
    if (cached) this.drop(key);
    const flight = `${key}:${version.size}:${version.mtimeNs}:${version.ctimeNs}`;
    let scan = this.scans.get(flight);
    if (!scan) {
      const startedNs = BigInt(Date.now()) * 1_000_000n;
      scan = scanLargeFile(fd).then((result) => {
        if (result.kind === "text" && startedNs - result.facts.version.ctimeNs > this.racyMarginNs)
          this.put(key, result.facts);
        return result;
      });
      const forget = () => this.scans.delete(flight);
      scan.then(forget, forget);
      this.scans.set(flight, scan);
    }
    return scan;
  }

  drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= costOf(entry);
  }

  dropVersion(version: FileVersion): void {
    this.drop(keyOf(version));
  }

  /** Bytes the cached indexes hold (what the bound applies to). */
  get heldBytes(): number {
    return this.bytes;
  }

  private put(key: string, facts: LargeFileFacts): void {
    const cost = costOf(facts);
    if (cost > this.maxBytes) return;
    this.drop(key);
    for (const [oldest] of this.entries) {
      if (this.bytes + cost <= this.maxBytes) break;
      this.drop(oldest);
    }
    this.entries.set(key, facts);
    this.bytes += cost;
  }
}

/** The one cache of a bridge process: indexes are per file, not per session, so every session shares them. */
export const largeFileIndexes = new LargeFileIndexCache(MAX_LINE_INDEX_CACHE_BYTES);
