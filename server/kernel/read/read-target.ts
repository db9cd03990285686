// One path of a /r call, loaded and ready to render within an allowance: a text file page, a directory
// listing, a binary file's description (an image's type, and its bytes when asked for), or the failure that explains why it cannot be read.
import { closestPaths } from "../../sandbox/closest-paths.js";
import path from "node:path";
import { ErrorCode, ToolError, toFailure } from "../../errors.js";
import { walkInsideRoot, type SharedRoot } from "../../sandbox/fd-walk.js";
import fs from "node:fs";
import { readHeldFileSync, readOpenFile } from "./file-read.js";
import { reopenForReading } from "../../sandbox/fd-ops.js";
import {
  MAX_INDEXED_LINES,
  MAX_RANGED_READ_FILE_BYTES,
  MAX_TEXT_FILE_BYTES,
  RANGED_READ_MIN_BYTES,
} from "../limits.js";
import { largeFileIndexes, sameVersion, versionOf, type LargeFileFacts } from "./large-file-index.js";
import { buildRangedPage, rangedDemand, readPageWindow, type PageWindow } from "./ranged-page.js";
import { entryCost, openDirectoryListing, type DirectoryPage } from "./read-directory.js";
import { buildTextPage, measureRange, type TextPage } from "./read-page.js";
import { fingerprintBytes } from "./read-coverage.js";
import { imageFactsOf, type ImageFacts } from "./image.js";
import { decodeLossy, diskOffsetOf, indexLines, type LineIndex, type TextFile } from "../../text/index.js";

export interface RangeRequest {
  offset: number;
  col: number;
  limit: number | undefined;
}

export type LoadedTarget =
  | {
      kind: "text";
      display: string;
      absolute: string;
      size: number;
      fingerprint: string;
      file: TextFile;
      index: LineIndex;
      demand: number;
    }
  | {
      /** A large UTF-8 file: its facts from the index cache and the bytes of the requested page's reach. */
      kind: "ranged";
      display: string;
      absolute: string;
      size: number;
      fingerprint: string;
      facts: LargeFileFacts;
      window: PageWindow;
      demand: number;
    }
  | {
      kind: "binary";
      display: string;
      size: number;
      fingerprint: string;
      image: ImageFacts | undefined;
      demand: number;
    }
  | { kind: "directory"; display: string; listing: ReturnType<typeof openDirectoryListing>; demand: number }
  | {
      kind: "failed";
      requested: string;
      display: string | undefined;
      error: unknown;
      failure: ReturnType<typeof toFailure>;
      demand: number;
    };

export type RenderedTarget =
  | { kind: "text"; page: TextPage; diskStart: number; diskEnd: number; used: number }
  | { kind: "directory"; page: DirectoryPage; used: number };

const BINARY_DEMAND = 0;

function notAFile(display: string): ToolError {
  return new ToolError(
    ErrorCode.notAFile,
    `${display} is not a regular file or directory (a socket, device or FIFO), so it cannot be read; /t shows what it is.`,
    {
      detail: { path: display },
      retryable: false,
    },
  );
}

/** Builds the exact /f URL offered when a path does not exist. */
export type FindUrl = (name: string) => string;

/**
 * A small file is read, fingerprinted and indexed synchronously (through the thread pool it would only add round
 * trips, see file-read.ts); a file over RANGED_READ_MIN_BYTES is paged from its byte range (loadLarge). Everything
 * up to the first await runs synchronously, so `root` (the call's SharedRoot, which the paths of one /r walk
 * from) may be closed as soon as this returns its promise.
 */
export async function loadTarget(
  root: SharedRoot,
  requested: string,
  range: RangeRequest,
  findUrl: FindUrl,
  max: number,
  imageData = false,
): Promise<LoadedTarget> {
  let display: string | undefined;
  try {
    const target = walkInsideRoot(root, requested, { allowMissing: true });
    let bytes: Buffer | undefined;
    let readFd: number | undefined;
    try {
      display = target.display;
      if (!target.exists) {
        // A Windows-style path (src\app.py) names one missing entry; find looks for its last part.
        const name = path.posix.basename(display).split("\\").filter(Boolean).pop() ?? path.posix.basename(display);
        const slashes = display.includes("\\") ? " Paths here use /, not \\." : "";
        const existingDir =
          display
            .split("/")
            .slice(0, display.split("/").length - target.pending.length)
            .join("/") || "/";
        const closest = closestPaths(target.dirFd, existingDir, target.pending);
        throw new ToolError(
          ErrorCode.pathNotFound,
          closest.length > 0
            ? `${display} does not exist.${slashes} Closest existing: ${closest.join(", ")} (closest lists them). The find URL looks for "${name}" by name across the project.`
            : `${display} does not exist.${slashes} The find URL looks for "${name}" by name across the project.`,
          { detail: { path: display }, extra: { ...(closest.length > 0 ? { closest } : {}), find: findUrl(name) } },
        );
      }
      // fstat of the held descriptor: a FIFO, socket or device is refused without ever being opened.
      const info = target.stats!;
      if (info.isDirectory()) {
        const listing = openDirectoryListing(target.fd!, range);
        return { kind: "directory", display, listing, demand: listing.demand(range.offset, range.limit) };
      }
      if (!info.isFile()) throw notAFile(display);
      if (info.size > MAX_RANGED_READ_FILE_BYTES) throw tooLarge(display, info.size, MAX_RANGED_READ_FILE_BYTES);
      if (info.size > RANGED_READ_MIN_BYTES) readFd = reopenForReading(target.fd!);
      if (readFd === undefined) bytes = readHeldFileSync(target.fd!, info.size);
    } finally {
      target.close();
    }
    if (readFd !== undefined) return await loadLarge(readFd, display, target.absolute, range, max, imageData);
    return fromBytes(bytes!, display, target.absolute, range, imageData);
  } catch (error) {
    return { kind: "failed", requested, display, error, failure: toFailure(error), demand: 0 };
  }
}

function tooLarge(display: string, size: number, limit: number): ToolError {
  return new ToolError(
    ErrorCode.fileTooLarge,
    limit === MAX_TEXT_FILE_BYTES
      ? `${display} is ${size} bytes and not UTF-8 text (UTF-16, UTF-32 or binary); /r loads such files up to ${MAX_TEXT_FILE_BYTES} bytes. Use /g to find the lines you need.`
      : `${display} is ${size} bytes; /r pages UTF-8 files up to ${MAX_RANGED_READ_FILE_BYTES} bytes and ${MAX_INDEXED_LINES} lines by range. Use /g to find the lines you need.`,
    { detail: { path: display, size, limit }, retryable: false },
  );
}

/** Scans that may find the file changed under them before the call gives up with path_changed. */
const LARGE_FILE_ATTEMPTS = 3;

/**
 * A large file, read through an open descriptor this function closes: a UTF-8 file paged from its cached index
 * (the page's bytes re-checked against the version the index was built from, so the fingerprint it carries is
 * the version it was read from), anything else loaded whole within MAX_TEXT_FILE_BYTES.
 */
async function loadLarge(
  fd: number,
  display: string,
  absolute: string,
  range: RangeRequest,
  max: number,
  imageData: boolean,
): Promise<LoadedTarget> {
  try {
    for (let attempt = 0; attempt < LARGE_FILE_ATTEMPTS; attempt++) {
      const scan = await largeFileIndexes.obtain(fd);
      if (scan.kind === "changed") continue;
      const size = Number(versionOf(fd).size);
      if (scan.kind === "too_many_lines") throw tooLarge(display, size, MAX_INDEXED_LINES);
      // A file with bytes that are not UTF-8 (an image without a NUL, say) is judged whole, as before, when it can be.
      if (scan.kind === "not_utf8" || (scan.facts.invalidUtf8 && size <= MAX_TEXT_FILE_BYTES)) {
        if (size > MAX_TEXT_FILE_BYTES) throw tooLarge(display, size, MAX_TEXT_FILE_BYTES);
        return fromBytes(readOpenFile(fd, size), display, absolute, range, imageData);
      }
      const { facts } = scan;
      const window = readPageWindow(fd, facts, range, max);
      if (!sameVersion(versionOf(fd), facts.version)) {
        largeFileIndexes.dropVersion(facts.version);
        continue;
      }
      const { fingerprint } = facts;
      const demand = rangedDemand(facts, range);
      return { kind: "ranged", display, absolute, size: facts.size, fingerprint, facts, window, demand };
    }
    throw new ToolError(
      ErrorCode.pathChanged,
      `${display} kept changing while it was read (it is being written to). Fetch the same URL again once it settles.`,
      { detail: { path: display }, retryable: true, agentAction: "wait_and_retry" },
    );
  } finally {
    fs.closeSync(fd);
  }
}

/** A file read whole: fingerprinted, decoded, and a text file line-indexed. */
function fromBytes(
  bytes: Buffer,
  display: string,
  absolute: string,
  range: RangeRequest,
  imageData: boolean,
): LoadedTarget {
  const fingerprint = fingerprintBytes(bytes);
  const file = decodeLossy(bytes);
  // An image nearly always holds a NUL (binary); one that does not reads as invalid UTF-8, and is an image still.
  // Its data, when asked for, is these bytes: the version the fingerprint names.
  const image = file.kind === "binary" || file.invalidUtf8 ? imageFactsOf(bytes, imageData) : undefined;
  if (file.kind === "binary" || image)
    return { kind: "binary", display, size: bytes.length, fingerprint, image, demand: BINARY_DEMAND };
  const index = indexLines(file.utf8);
  const demand = measureRange(file.utf8, index, range);
  return { kind: "text", display, absolute, size: bytes.length, fingerprint, file, index, demand };
}

/** Disk offset of a UTF-8 offset, counting the BOM as read when the page starts at the top. */
function diskRange(target: Extract<LoadedTarget, { kind: "text" }>, page: TextPage): [number, number] {
  const start = page.start === 0 ? 0 : diskOffsetOf(target.file, page.start);
  const end = page.end >= target.file.utf8.length ? target.size : diskOffsetOf(target.file, page.end);
  return [start, end];
}

export function renderTarget(target: LoadedTarget, range: RangeRequest, allowance: number): RenderedTarget | undefined {
  if (target.kind === "text") {
    const page = buildTextPage(
      target.file.utf8,
      { offset: range.offset, col: range.col, limit: range.limit, allowance },
      target.index,
    );
    const [diskStart, diskEnd] = diskRange(target, page);
    return { kind: "text", page, diskStart, diskEnd, used: page.end - page.start };
  }
  if (target.kind === "ranged") {
    const page = buildRangedPage(target.facts, target.window, range, allowance);
    const { bomBytes } = target.facts;
    const diskStart = page.start === 0 ? 0 : bomBytes + page.start;
    const diskEnd = page.end >= target.facts.index.length ? target.size : bomBytes + page.end;
    return { kind: "text", page, diskStart, diskEnd, used: page.end - page.start };
  }
  if (target.kind === "directory") {
    const page = target.listing.page(range.offset, range.limit, allowance);
    return { kind: "directory", page, used: page.entries.reduce((sum, entry) => sum + entryCost(entry), 0) };
  }
  return undefined;
}
