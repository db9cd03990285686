// The ripgrep /g engine: rg walks and matches, we shape the answer. Its flags pin down the same rules the
// portable engine follows (hidden files searched, .gitignore without a .git folder, .git and node_modules
// skipped, \r\n terminators, binary files dropped), so switching engines never changes a result.
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ancestorIgnoreLevels, rebaseLevels } from "./gitignore.js";
import { OrderedFiles, presentLine, type GrepLine, type MatchCollector } from "./grep-collect.js";
import type { GrepSearch } from "./grep-request.js";
import { MAX_MATCHING_LINE_BYTES } from "./grep-collect.js";
import { confinedCommand, heldFdPath, type RipgrepConfinement } from "./ripgrep-confine.js";
import { startRipgrep } from "./ripgrep-process.js";
import { ripgrepRegexError } from "./search-pattern.js";
import { bridgeIsRoot } from "../../sandbox/identity.js";
import { pathChanged, toDisplayPath } from "../../sandbox/path-lexical.js";
import { toRelative } from "./walk.js";

const INCLUDE_TYPE = "urlbridgeinclude";

/** Flags shared by every search, and by the benchmark floor that runs rg directly. */
export function ripgrepBaseArgs(includeIgnored: boolean): string[] {
  const args = [
    "--json",
    "--no-config",
    "--no-messages",
    "--hidden",
    "--crlf",
    // Binary files are searched to the end (NULs read as line ends) so that one with a match can be named in
    // the answer; their lines are never shown. No --sort (it makes rg single-threaded: OrderedFiles sorts) and
    // no --max-filesize (rg streams a file of any size).
    "--binary",
  ];
  if (includeIgnored) return [...args, "--no-ignore"];
  // Only .gitignore files inside the project count: none above it, no global or .git/info/exclude rules,
  // no .ignore/.rgignore, and no need for a .git folder.
  return [
    ...args,
    "--no-require-git",
    "--no-ignore-parent",
    "--no-ignore-global",
    "--no-ignore-exclude",
    "--no-ignore-dot",
    "--glob=!.git/",
    "--glob=!node_modules/",
  ];
}

interface RgText {
  text?: string;
  bytes?: string;
}

function bytesOf(value: RgText): Buffer {
  return value.text !== undefined ? Buffer.from(value.text, "utf8") : Buffer.from(value.bytes ?? "", "base64");
}

function stripTerminator(bytes: Buffer): Buffer {
  let end = bytes.length;
  if (bytes[end - 1] === 0x0a) {
    end--;
    if (bytes[end - 1] === 0x0d) end--;
  }
  return bytes.subarray(0, end);
}

function textOf(value: RgText): string {
  return value.text !== undefined ? value.text : bytesOf(value).toString("utf8");
}

interface RgEvent {
  type: string;
  data: {
    path?: RgText;
    lines?: RgText;
    line_number?: number;
    submatches?: Array<{ start: number }>;
    binary_offset?: number | null;
    stats?: { searches?: number };
  };
}

/** Writes the .gitignore rules of the directories above the target as one root-relative ignore file. */
async function writeAncestorRules(search: GrepSearch, targetRel: string): Promise<string | undefined> {
  if (search.includeIgnored || targetRel === "" || search.targetKind === "file") return undefined;
  const levels = await ancestorIgnoreLevels(search.rootFd, targetRel);
  if (levels.length === 0) return undefined;
  const file = path.join(os.tmpdir(), `urlbridge-rg-${randomBytes(6).toString("hex")}.ignore`);
  await fs.writeFile(file, rebaseLevels(levels), { mode: 0o600 });
  return file;
}

export class RipgrepUnavailable extends Error {
  override name = "RipgrepUnavailable";
}

/**
 * rg searched no file at all below a directory target. Either the folder holds nothing searchable, or it was
 * swapped for a symlink as rg started (rg then skips the symlink silently, answering "no matches"). The caller
 * answers this one search with the descriptor-walking engine, which is right in both cases.
 */
export class RipgrepSearchedNothing extends Error {
  override name = "RipgrepSearchedNothing";
}

/** True when the held root holds a regular file named .git (a linked worktree's link to its repository). */
async function isGitLinkFile(rootFd: number): Promise<boolean> {
  return fs.lstat(path.join(heldFdPath(rootFd), ".git")).then(
    (stat) => stat.isFile(),
    () => false,
  );
}

/**
 * Runs rg over the target (a directory, or one file named explicitly), feeding the collector until it is full.
 * rg starts in the root the containment walk holds (/proc/<pid>/fd/<root fd>, never the root's path string) and
 * never follows links (no --follow); confined (ripgrep-confine.ts), the kernel also denies it anything outside
 * the checked target. Unconfined (URLBRIDGE_GREP_ENGINE=rg where Landlock is missing), a folder swapped for a
 * symlink while rg walks below the target can still be followed by rg's own open(): see docs/SECURITY.md.
 */
export async function searchWithRipgrep(
  rgPath: string,
  search: GrepSearch,
  collector: MatchCollector,
  confinement?: RipgrepConfinement,
): Promise<void> {
  const { root, target, pattern, include } = search;
  const targetRel = toRelative(root, target);
  const ignoreFile = await writeAncestorRules(search, targetRel);
  // rg runs to the end of the tree (it is not sorted, so it cannot be stopped once the answer is full): no file
  // reports more lines than the answer could show, plus one that tells the collector the limit cut it.
  const args = [...ripgrepBaseArgs(search.includeIgnored), `--max-count=${collector.limits.maxMatches + 1}`];
  if (ignoreFile) args.push(`--ignore-file=${ignoreFile}`);
  // A linked worktree's .git link file names metadata outside the project: never searched (fd-walk.ts
  // gitLinkRefused), even with ignored=1. Anchored, so a .git below the root is as any other file.
  if (targetRel === "" && (await isGitLinkFile(search.targetFd))) args.push("--glob=!/.git");
  if (include?.ripgrepTypeGlob && search.targetKind === "dir")
    args.push(`--type-add=${INCLUDE_TYPE}:${include.ripgrepTypeGlob}`, `--type=${INCLUDE_TYPE}`);
  args.push(...pattern.rgArgs, "--", targetRel === "" ? "." : targetRel);
  const allowed = [heldFdPath(search.targetFd), ...(ignoreFile ? [ignoreFile] : [])];
  // Confined, rg's messages stay on: "<target>: Permission denied" is how a target swapped since the walk shows.
  const command = confinement
    ? confinedCommand(
        confinement,
        rgPath,
        args.filter((a) => a !== "--no-messages"),
        allowed,
      )
    : { command: rgPath, args };
  try {
    await runRipgrep(command, confinement !== undefined, search, collector, targetRel);
  } finally {
    if (ignoreFile) await fs.rm(ignoreFile, { force: true });
  }
}

/** How rg's JSON lines for one file start; only "begin" and "end" are looked at for a file out of the answer. */
const END_EVENT = Buffer.from('{"type":"end"');
const MATCH_EVENT = Buffer.from('{"type":"match"');

interface CurrentFile {
  relative: string;
  lines: GrepLine[];
  matched: boolean;
  /** Out of the answer (include= refuses it, or it sorts past the bound): its events are not parsed. */
  skip: boolean;
  /** A matching line longer than MAX_MATCHING_LINE_BYTES: named in the answer instead of shown. */
  overlong: boolean;
}

async function runRipgrep(
  command: { command: string; args: string[] },
  confined: boolean,
  search: GrepSearch,
  collector: MatchCollector,
  targetRel: string,
): Promise<void> {
  const { include } = search;
  const ordered = new OrderedFiles(collector.limits);
  const maxLines = collector.limits.maxMatches;
  const child = await startRipgrep(command, confined, heldFdPath(search.rootFd));
  return new Promise((resolve, reject) => {
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    /** Inside an event too long to hold: its bytes are dropped up to the next newline. */
    let discarding = false;
    let stderr = "";
    let current: CurrentFile | undefined;
    let sawFile = false;
    let searches: number | undefined;
    let stopped = false;
    let timedOut = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      // The launcher ends rg (and itself) on SIGTERM; killing it outright would orphan rg.
      child.kill(confined ? "SIGTERM" : "SIGKILL");
    };
    const timer = setTimeout(
      () => {
        timedOut = true;
        stop();
      },
      Math.max(0, search.deadline - Date.now()),
    );
    const onAbort = () => stop();
    search.signal.addEventListener("abort", onAbort, { once: true });
    // Aborted while rg started (the spawner's answer is awaited when it is slow).
    if (search.signal.aborted) onAbort();

    const handle = (line: Buffer) => {
      if (current?.skip) {
        if (line.subarray(0, END_EVENT.length).equals(END_EVENT)) current = undefined;
        return;
      }
      // A file already holding more lines than the answer can show: its further matches need no parsing.
      if (current && current.lines.length > maxLines && line.subarray(0, MATCH_EVENT.length).equals(MATCH_EVENT))
        return;
      const event = JSON.parse(line.toString("utf8")) as RgEvent;
      const { data } = event;
      if (event.type === "begin") {
        sawFile = true;
        const relative = textOf(data.path!).replace(/^\.\//, "");
        const underTarget = targetRel === "" ? relative : relative.slice(targetRel.length + 1);
        const refused =
          search.targetKind === "dir" &&
          include !== undefined &&
          !include.matches(underTarget, path.posix.basename(relative));
        current = { relative, lines: [], matched: false, skip: refused || !ordered.wants(relative), overlong: false };
      } else if (event.type === "match" && current) {
        current.matched = true;
        // No file shows more lines than the limit; one more tells the collector that the limit cut it.
        if (current.lines.length > maxLines) return;
        const bytes = stripTerminator(bytesOf(data.lines!));
        const start = data.submatches?.[0]?.start ?? 0;
        const firstMatch = bytes.subarray(0, start).toString("utf8").length;
        current.lines.push(presentLine(data.line_number!, bytes.toString("utf8"), firstMatch));
      } else if (event.type === "summary") {
        searches = data.stats?.searches;
      } else if (event.type === "end" && current) {
        // A NUL byte makes a file binary; rg may have reported lines before it saw one, so none is shown.
        const binary = data.binary_offset !== null && data.binary_offset !== undefined;
        if (current.overlong) ordered.addSkipped(current.relative, "long_line");
        else if (binary) {
          if (current.matched) ordered.addSkipped(current.relative, "binary");
        } else ordered.add(current.relative, current.lines);
        current = undefined;
      }
    };

    /** The start of an event too long to hold: a match of the current file marks it, anything else is dropped. */
    const overflow = () => {
      const head = Buffer.concat(pending).subarray(0, MATCH_EVENT.length);
      if (current && head.equals(MATCH_EVENT)) {
        current.matched = true;
        current.overlong = true;
      }
      pending = [];
      pendingBytes = 0;
      discarding = true;
    };

    child.stdout.on("data", (chunk: Buffer) => {
      let from = 0;
      while (!stopped && from < chunk.length) {
        const nl = chunk.indexOf(0x0a, from);
        if (nl === -1) {
          if (!discarding) {
            pending.push(chunk.subarray(from));
            pendingBytes += chunk.length - from;
            if (pendingBytes > MAX_MATCHING_LINE_BYTES) overflow();
          }
          return;
        }
        if (discarding) discarding = false;
        else {
          const piece = chunk.subarray(from, nl);
          const line = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
          pending = [];
          pendingBytes = 0;
          if (line.length > 0) handle(line);
        }
        from = nl + 1;
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk;
    });
    void child.ended.then(({ code, failure }) => {
      clearTimeout(timer);
      search.signal.removeEventListener("abort", onAbort);
      if (failure !== undefined) {
        reject(new RipgrepUnavailable(failure));
        return;
      }

      if (confined && code === 125 && stderr.includes("urlbridge-sandbox:")) {
        reject(new RipgrepUnavailable(stderr.trim()));
        return;
      }
      // rg re-resolves every path it opens from the root; confined, a path that no longer leads into the checked
      // target is denied (EACCES). Denied at the target itself, or anywhere when the bridge is root (whom file
      // permissions do not stop), that means a folder was swapped mid-search: the answer would be partial, so the
      // agent retries instead. Otherwise a denied file may just be unreadable, and is skipped as before.
      const targetArg = targetRel === "" ? "." : targetRel;
      const denied = stderr
        .split("\n")
        .map((line) => line.replace(/^rg: /, ""))
        .filter((line) => line.includes(": Permission denied"));
      if (
        confined &&
        !stopped &&
        denied.length > 0 &&
        (bridgeIsRoot() || denied.some((line) => line.startsWith(`${targetArg}: `)))
      ) {
        reject(pathChanged(toDisplayPath(search.root, search.target)));
        return;
      }
      if (!stopped && code === 2 && !sawFile && /regex|parse error|syntax/i.test(stderr)) {
        reject(ripgrepRegexError(search.pattern, stderr, search.urls));
        return;
      }
      if (!stopped && search.targetKind === "dir" && targetRel !== "" && searches === 0) {
        reject(new RipgrepSearchedNothing(targetRel));
        return;
      }
      // Whatever was found before a deadline or an abort still goes out, in path order.
      ordered.drainInto(collector);
      if (timedOut) collector.timeUp();
      resolve();
    });
  });
}
