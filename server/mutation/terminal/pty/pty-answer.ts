// The fields every pty=1 answer shares (start, input, view): the process's state and its screen, plus the
// exact URLs that act on it next, and the error a call on an ended or unknown PTY answers.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../../errors.js";
import type { ExactUrls } from "../../../kernel/tool/definition.js";
import type { PtyRecord, PtyRegistry } from "./pty-registry.js";
import { PTY_END_REASONS, type ScreenView } from "./pty-process.js";

export const screenFields = {
  rows: z.number().int(),
  cols: z.number().int(),
  cursor: z
    .strictObject({ row: z.number().int(), col: z.number().int() })
    .describe("Where the cursor is, 1-based: row 1 is the top visible row."),
  altScreen: z.boolean().describe("A full-screen program (less, vim, top) is drawing on the alternate screen."),
  screen: z.string().describe("The visible rows as text, one per line; trailing blank rows left out."),
  scrollback: z
    .array(z.string())
    .optional()
    .describe("The last lines=<n> lines that scrolled off the top, oldest first (when lines= was given)."),
  scrollbackTotal: z.number().int().describe("Lines held above the screen (bounded per process)."),
};

export const ptyStateFields = {
  pid: z.number().int().describe("The PTY process's id in this session: pass it as pid= to /i and /m."),
  processState: z.enum(["running", "exited"]),
  exitCode: z.number().int().nullable().optional().describe("exited only: the command's exit status."),
  signal: z.string().nullable().optional().describe("exited only: the signal that ended it, if one did."),
  endReason: z
    .enum(PTY_END_REASONS)
    .optional()
    .describe(
      "exited only: why it ended (idle: nobody used it for the idle time in /api/health limits; memory, growth: the session passed an agent limit).",
    ),
  endOffset: z.number().int().describe("Bytes of output so far: /m?raw=1&offset=<n> reads the raw bytes from n."),
};

export const ptyUrlFields = {
  input: z.string().optional().describe("running only: /i URL to type into it; append &raw=<text> or set key=."),
  view: z.string().describe("/m URL of its current screen."),
  stop: z.string().optional().describe("running only: /x URL that ends its whole process tree."),
};

export function screenOf(view: ScreenView, withScrollback: boolean) {
  const { scrollback, ...rest } = view;
  return { ...rest, ...(withScrollback ? { scrollback } : {}) };
}

export function stateOf(record: PtyRecord) {
  const end = record.process.end;
  return {
    pid: record.pid,
    processState: end ? ("exited" as const) : ("running" as const),
    ...(end ? { exitCode: end.exitCode, signal: end.signal, endReason: end.reason } : {}),
    endOffset: record.process.replay.endOffset,
  };
}

export function urlsOf(urls: ExactUrls, pid: number, running: boolean) {
  return {
    ...(running ? { input: urls.to("m", "i", [["pid", pid]]) } : {}),
    view: urls.to("m", "m", [["pid", pid]]),
    ...(running ? { stop: urls.to("m", "x", [["stop", pid]]) } : {}),
  };
}

/** The live PTY `pid` of this session, or the error that says what became of it. */
export function livePty(ptys: PtyRegistry, pid: number, sessionId: string): PtyRecord {
  const record = ptys.liveOf(pid, sessionId);
  if (record && record.process.running) return record;
  const ended = ptys.endedOf(pid, sessionId);
  if (ended || record) {
    const end = ended?.end ?? record!.process.end!;
    throw new ToolError(
      ErrorCode.processEnded,
      `PTY process ${pid} has ended (${end.reason}${end.exitCode !== null ? `, exit code ${end.exitCode}` : ""}${end.signal ? `, ${end.signal}` : ""}); nothing was typed. /m?pid=${pid} shows its final screen; start a new one with /x?pty=1.`,
      { detail: { pid, ...end, endedAt: new Date(end.endedAt).toISOString() }, retryable: false },
    );
  }
  throw notFound(ptys, pid);
}

export function notFound(ptys: PtyRegistry, pid: number): ToolError {
  return new ToolError(
    ErrorCode.processNotFound,
    `No PTY process ${pid} of this session in this bridge run (it began ${ptys.bridgeStartedAt}). A bridge restart ends every PTY process; one that ended long ago is forgotten. List yours with /m; start a new one with /x?pty=1.`,
    { detail: { pid, bridgeStartedAt: ptys.bridgeStartedAt }, retryable: false },
  );
}
