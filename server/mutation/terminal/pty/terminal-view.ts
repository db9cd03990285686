// terminal view (/m): reads one of this session's pty=1 processes without touching it: its rendered screen
// (with the last lines= of scrollback), or with offset= its raw output bytes by offset, continued with
// nextOffset and saying how many bytes the bound dropped. Without pid= it lists the session's processes.
import { z } from "zod";
import { defineTool, type ToolContext } from "../../../kernel/tool/definition.js";
import { runtimeOf } from "../../journal/context.js";
import { DEFAULT_RAW_PAGE_BYTES, MAX_RAW_PAGE_BYTES, MAX_VIEW_SCROLLBACK } from "./pty-limits.js";
import { notFound, ptyStateFields, ptyUrlFields, screenFields, screenOf, stateOf, urlsOf } from "./pty-answer.js";
import { PTY_END_REASONS, type ScreenView } from "./pty-process.js";

const schema = z.object({
  pid: z.number().int().positive().optional(),
  lines: z.number().int().min(0).max(MAX_VIEW_SCROLLBACK).optional(),
  offset: z.number().int().min(0).optional(),
  limit: z.number().int().min(1).max(MAX_RAW_PAGE_BYTES).optional(),
});
type ViewArgs = z.infer<typeof schema>;

const endedFields = {
  exitCode: z.number().int().nullable().optional(),
  signal: z.string().nullable().optional(),
  endReason: z.enum(PTY_END_REASONS).optional(),
};

export const screenOutput = z.strictObject({
  ok: z.literal(true),
  mode: z.literal("screen"),
  ...ptyStateFields,
  command: z.string(),
  ...screenFields,
  ...ptyUrlFields,
});

export const rawOutput = z.strictObject({
  ok: z.literal(true),
  mode: z.literal("raw"),
  ...ptyStateFields,
  offset: z.number().int().describe("Where this page starts (past the bytes lost, when some were)."),
  nextOffset: z.number().int().describe("Pass it as offset= for the next page."),
  lostBytes: z
    .number()
    .int()
    .describe("Bytes between the offset asked for and the oldest kept one, dropped by the replay bound (/api/health)."),
  text: z.string().describe("The bytes as UTF-8, cut only between characters, escape sequences included."),
  more: z.string().optional().describe("The /m URL of the next page, while more output is kept than was returned."),
});

export const listOutput = z.strictObject({
  ok: z.literal(true),
  mode: z.literal("list"),
  processes: z.array(
    z.strictObject({
      pid: z.number().int(),
      kind: z.enum(["pty", "background"]),
      command: z.string().describe("Its first 120 characters."),
      cwd: z.string(),
      startedAt: z.string(),
      processState: z.enum(["running", "exited"]),
      ...endedFields,
      view: z.string().optional().describe("pty only: its /m URL."),
    }),
  ),
});

export const viewOutput = z.discriminatedUnion("mode", [screenOutput, rawOutput, listOutput]);
export type ViewOutput = z.infer<typeof viewOutput>;

export const terminalViewTool = defineTool({
  id: "terminal_view",
  route: "m",
  longRoutes: ["screen", "view"],
  capability: "mutation",
  permission: "terminal",
  description:
    "Read a pty=1 process: its screen and cursor (lines= adds scrollback), or raw output from offset=; no pid lists processes.",
  example: "/m?pid=1234",
  schema,
  output: viewOutput,
  url: {},
  journal: { record: false },
  execute: executeView,
});

function executeView(args: ViewArgs, ctx: ToolContext): ViewOutput {
  const { ptys, processes } = runtimeOf(ctx).terminal;
  const session = ctx.session.id;
  if (args.pid === undefined) {
    const { live, ended } = ptys.list(session);
    const background = processes.list({ kind: "background", sessionId: session });
    return {
      ok: true,
      mode: "list",
      processes: [
        ...live.map((r) => ({
          pid: r.pid,
          kind: "pty" as const,
          command: r.command.slice(0, 120),
          cwd: r.cwd,
          startedAt: new Date(r.startedAt).toISOString(),
          processState: r.process.running ? ("running" as const) : ("exited" as const),
          view: ctx.urls.to("m", "m", [["pid", r.pid]]),
        })),
        ...background.map((t) => ({
          pid: t.pid,
          kind: "background" as const,
          command: t.command.slice(0, 120),
          cwd: t.cwd,
          startedAt: new Date(t.startedAt).toISOString(),
          processState: "running" as const,
        })),
        ...ended.map((e) => ({
          pid: e.pid,
          kind: "pty" as const,
          command: e.command.slice(0, 120),
          cwd: e.cwd,
          startedAt: new Date(e.startedAt).toISOString(),
          processState: "exited" as const,
          exitCode: e.end.exitCode,
          signal: e.end.signal,
          endReason: e.end.reason,
          view: ctx.urls.to("m", "m", [["pid", e.pid]]),
        })),
      ],
    };
  }
  const pid = args.pid;
  const live = ptys.liveOf(pid, session);
  const ended = live ? undefined : ptys.endedOf(pid, session);
  if (!live && !ended) throw notFound(ptys, pid);
  if (live) live.process.lastUsed = Date.now();
  const state = live
    ? stateOf(live)
    : {
        pid,
        processState: "exited" as const,
        exitCode: ended!.end.exitCode,
        signal: ended!.end.signal,
        endReason: ended!.end.reason,
        endOffset: ended!.endOffset,
      };
  const running = live?.process.running ?? false;
  if (args.offset !== undefined) {
    if (!live) {
      // The ended process's bytes went with it; its final screen stays.
      return {
        ok: true,
        mode: "raw",
        ...state,
        offset: args.offset,
        nextOffset: state.endOffset,
        lostBytes: Math.max(0, state.endOffset - args.offset),
        text: "",
      };
    }
    const page = live.process.read(args.offset, args.limit ?? DEFAULT_RAW_PAGE_BYTES);
    return {
      ok: true,
      mode: "raw",
      ...state,
      offset: page.offset,
      nextOffset: page.nextOffset,
      lostBytes: page.lostBytes,
      text: page.text,
      ...(page.nextOffset < page.endOffset
        ? {
            more: ctx.urls.to("m", "m", [
              ["pid", pid],
              ["offset", page.nextOffset],
              ...(args.limit !== undefined ? ([["limit", args.limit]] as Array<[string, number]>) : []),
            ]),
          }
        : {}),
    };
  }
  const view: ScreenView = live
    ? live.process.screen(args.lines ?? 0)
    : trimScrollback(ended!.finalScreen, args.lines ?? 0);
  return {
    ok: true,
    mode: "screen",
    ...state,
    command: (live ?? ended)!.command.slice(0, 200),
    ...screenOf(view, args.lines !== undefined),
    ...urlsOf(ctx.urls, pid, running),
  };
}

function trimScrollback(view: ScreenView, lines: number): ScreenView {
  return { ...view, scrollback: lines === 0 ? [] : view.scrollback.slice(-lines) };
}
