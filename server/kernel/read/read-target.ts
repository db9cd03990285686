// One path of a /r call, loaded and ready to render within an allowance: a text file page, a directory
// listing, a binary file's description (an image's type, and its bytes when asked for), or the failure that explains why it cannot be read.
import { closestPaths } from "../../sandbox/closest-paths.js";
import path from "node:path";
import { ErrorCode, ToolError, toFailure } from "../../errors.js";
import { walkInsideRoot, type SharedRoot } from "../../sandbox/fd-walk.js";
import { readHeldFileSync } from "./file-read.js";
import { MAX_TEXT_FILE_BYTES } from "../limits.js";
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
 * Synchronous on purpose: a file's fingerprint, UTF-8 check and line index run on the event loop whatever
 * its size, so reading it through the thread pool would only add round trips (see file-read.ts). `root` is
 * the call's SharedRoot: the paths of one /r walk from one root descriptor verified in this call.
 */
export function loadTarget(
  root: SharedRoot,
  requested: string,
  range: RangeRequest,
  findUrl: FindUrl,
  imageData = false,
): LoadedTarget {
  let display: string | undefined;
  try {
    const target = walkInsideRoot(root, requested, { allowMissing: true });
    let bytes: Buffer;
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
      if (info.size > MAX_TEXT_FILE_BYTES) {
        throw new ToolError(
          ErrorCode.fileTooLarge,
          `${display} is ${info.size} bytes; /r loads files up to ${MAX_TEXT_FILE_BYTES} bytes. Use /g to find the lines you need.`,
          {
            detail: { path: display, size: info.size, limit: MAX_TEXT_FILE_BYTES },
            retryable: false,
          },
        );
      }
      bytes = readHeldFileSync(target.fd!, info.size);
    } finally {
      target.close();
    }
    const fingerprint = fingerprintBytes(bytes);
    const file = decodeLossy(bytes);
    // An image nearly always holds a NUL (binary); one that does not reads as invalid UTF-8, and is an image still.
    // Its data, when asked for, is these bytes: the version the fingerprint names.
    const image = file.kind === "binary" || file.invalidUtf8 ? imageFactsOf(bytes, imageData) : undefined;
    if (file.kind === "binary" || image)
      return { kind: "binary", display, size: bytes.length, fingerprint, image, demand: BINARY_DEMAND };
    const index = indexLines(file.utf8);
    const demand = measureRange(file.utf8, index, range);
    return { kind: "text", display, absolute: target.absolute, size: bytes.length, fingerprint, file, index, demand };
  } catch (error) {
    return { kind: "failed", requested, display, error, failure: toFailure(error), demand: 0 };
  }
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
  if (target.kind === "directory") {
    const page = target.listing.page(range.offset, range.limit, allowance);
    return { kind: "directory", page, used: page.entries.reduce((sum, entry) => sum + entryCost(entry), 0) };
  }
  return undefined;
}
