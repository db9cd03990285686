// A read (/r) answer assembled from its rendered pages: one entry per file (text, binary or image) or directory,
// the complete/incomplete/unreturned path lists, the next URLs, and the coverage record of what was shown.
import { MAX_IMAGE_BYTES } from "../limits.js";
import { noteUtf8Sources, type Utf8Source } from "../../text/utf8-json.js";
import { readCoverage } from "./read-coverage.js";
import type {
  ReadBinaryEntry,
  ReadDirectoryEntry,
  ReadEntry,
  ReadFailure,
  ReadFileEntry,
  ReadOutput,
} from "./read-output.js";
import type { PathRange } from "./read-ranges.js";
import type { LoadedTarget, RangeRequest, RenderedTarget } from "./read-target.js";
import { nextUrl, rangesUrl, resumeRange } from "./read-urls.js";
import type { ToolContext } from "../tool/definition.js";

/** A file entry before content and complete are assigned (after startCol, which keeps them in that order). */
type FileEntryDraft = Omit<ReadFileEntry, "content" | "complete" | "rangeComplete"> &
  Partial<Pick<ReadFileEntry, "content" | "complete" | "rangeComplete">>;

/** What a file entry says of a text file, whether it was read whole or paged by range. */
function textFacts(target: Extract<LoadedTarget, { kind: "text" | "ranged" }>) {
  if (target.kind === "text") {
    const { file } = target;
    return {
      encoding: file.encoding,
      newline: target.index.newline,
      length: file.utf8.length,
      invalid: file.invalidUtf8,
    };
  }
  const { facts } = target;
  const encoding = facts.bomBytes === 0 ? ("utf-8" as const) : ("utf-8-bom" as const);
  return { encoding, newline: facts.index.newline, length: facts.index.length, invalid: facts.invalidUtf8 };
}

function fileEntry(
  target: Extract<LoadedTarget, { kind: "text" | "ranged" }>,
  rendered: Extract<RenderedTarget, { kind: "text" }>,
  next: string | undefined,
): ReadFileEntry {
  const { page } = rendered;
  const file = textFacts(target);
  // Optional fields are assigned in place rather than spread in: the common whole-page entry then costs
  // one object, and metadata still comes before the content a truncating reader may cut.
  const entry: FileEntryDraft = {
    path: target.display,
    kind: "file",
    encoding: file.encoding,
    newline: file.newline,
    size: target.size,
    fingerprint: target.fingerprint,
    totalLines: page.totalLines,
    startLine: page.startLine,
    endLine: page.endLine,
  };
  if (page.startCol !== 1) entry.startCol = page.startCol;
  entry.content = page.content;
  // complete: this content is the whole file; rangeComplete: the requested range was returned to its end.
  entry.complete = page.start === 0 && page.end === file.length;
  entry.rangeComplete = page.complete;
  if (!page.complete) entry.truncated = true;
  if (file.invalid) {
    entry.invalidUtf8 = true;
    entry.notice = "Some bytes are not valid UTF-8; they are shown as U+FFFD.";
  }
  if (page.splitLine !== undefined) {
    entry.splitLine = page.splitLine;
    entry.splitNotice = `Line ${page.splitLine} alone exceeds this page's allowance, so it was cut at a UTF-8 boundary; next continues at col=${page.resume?.col}.`;
  }
  if (next) entry.next = next;
  // content and complete were assigned above.
  return entry as ReadFileEntry;
}

function directoryEntry(
  target: Extract<LoadedTarget, { kind: "directory" }>,
  rendered: Extract<RenderedTarget, { kind: "directory" }>,
  next: string | undefined,
): ReadDirectoryEntry {
  const { page } = rendered;
  return {
    path: target.display,
    kind: "dir",
    totalEntries: page.totalEntries,
    startEntry: page.startEntry,
    endEntry: page.endEntry,
    entries: page.entries,
    complete: page.startEntry === 1 && page.endEntry === page.totalEntries,
    rangeComplete: page.complete,
    ...(page.complete ? {} : { truncated: true as const }),
    ...(next ? { next } : {}),
  };
}

/** A binary file's entry: its size and fingerprint, and for an image its type and, when asked for, its bytes. */
function binaryEntry(ctx: ToolContext, target: Extract<LoadedTarget, { kind: "binary" }>): ReadBinaryEntry {
  const base = { path: target.display, kind: "binary" as const, size: target.size, fingerprint: target.fingerprint };
  const image = target.image;
  if (!image)
    return {
      ...base,
      complete: true,
      rangeComplete: true,
      notice: "Binary file (it contains NUL bytes); content not shown.",
    };
  const { mimeType } = image;
  if (image.data !== undefined)
    return {
      ...base,
      mimeType,
      complete: true,
      rangeComplete: true,
      notice: `${mimeType} image; data holds its bytes as base64.`,
      data: image.data,
    };
  if (image.tooLarge) {
    return {
      ...base,
      mimeType,
      complete: true,
      rangeComplete: true,
      notice: `${mimeType} image of ${target.size} bytes, over the ${MAX_IMAGE_BYTES}-byte bound of image=1; its bytes are not returned.`,
    };
  }
  const notice =
    target.size > MAX_IMAGE_BYTES
      ? `${mimeType} image of ${target.size} bytes; content not shown, and it is over the ${MAX_IMAGE_BYTES}-byte bound of image=1.`
      : `${mimeType} image; content not shown as text. Fetch ${ctx.urls.to("r", "r", [
          ["path", target.display],
          ["image", 1],
        ])} for its bytes as base64 data.`;
  return { ...base, mimeType, complete: true, rangeComplete: true, notice };
}

export function buildResult(
  requestedPaths: string[],
  ctx: ToolContext,
  targets: Array<{ target: LoadedTarget; range: RangeRequest }>,
  rendered: Array<RenderedTarget | undefined>,
  max: number,
): ReadOutput {
  const coverage = readCoverage.of(ctx.state);
  const files: ReadEntry[] = [];
  const failures: ReadFailure[] = [];
  const returned = new Set<string>();
  const complete = new Set<string>();
  const incomplete = new Set<string>();
  const unreturned: string[] = [];
  const nexts: string[] = [];
  const continuations: PathRange[] = [];
  const sources: Utf8Source[] = [];
  targets.forEach(({ target }, i) => {
    const out = rendered[i];
    if (target.kind === "failed") {
      unreturned.push(target.display ?? target.requested);
      const { ok: _ok, ...failure } = target.failure;
      failures.push({ path: target.display ?? target.requested, ...failure });
      return;
    }
    returned.add(target.display);
    if (target.kind === "binary") {
      complete.add(target.display);
      files.push(binaryEntry(ctx, target));
      return;
    }
    if (!out) return;
    const next = nextUrl(ctx, target.display, out, max);
    const resume = resumeRange(out);
    if (next && resume) {
      incomplete.add(target.display);
      nexts.push(next);
      continuations.push({ path: target.display, range: resume });
    } else {
      complete.add(target.display);
    }
    if ((target.kind === "text" || target.kind === "ranged") && out.kind === "text") {
      coverage.record(target.absolute, target.fingerprint, target.size, out.diskStart, out.diskEnd);
      const entry = fileEntry(target, out, next);
      sources.push({ holder: entry, key: "content", bytes: out.page.bytes });
      files.push(entry);
    } else if (target.kind === "directory" && out.kind === "directory") {
      files.push(directoryEntry(target, out, next));
    }
  });
  // A path read in two ranges is complete only when both are.
  for (const p of incomplete) complete.delete(p);
  const result: ReadOutput = {
    ok: true as const,
    requestedPaths,
    returnedPaths: [...returned],
    allComplete: incomplete.size === 0 && unreturned.length === 0,
    completePaths: [...complete],
    incompletePaths: [...incomplete],
    unreturnedPaths: unreturned,
    ...(nexts.length > 0 ? { truncated: true as const } : {}),
    ...(nexts.length === 1 ? { next: nexts[0] } : {}),
    // Several pages stopped short: one URL continues all of them, each path with its own range.
    ...(nexts.length > 1
      ? {
          next: rangesUrl(ctx, continuations, max),
          notice:
            "Several files stopped short; next continues all of them in one call (each entry's next continues one).",
        }
      : {}),
    files,
    ...(failures.length > 0 ? { failures } : {}),
  };
  // An edge that writes JSON may escape the pages' bytes rather than their decoded text (utf8-json.ts).
  noteUtf8Sources(result, sources);
  return result;
}
