// changes (/c): this session's change set and its diffs. No arguments: every intent with the files it changed,
// and per file the net change. intent=<callId> and/or path=: the exact unified diff of that intent or file (a file:
// over the whole session, or from since=<callId> on), paged like reads (offset=, fingerprint=).
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { defineTool, type ToolContext } from "../../kernel/tool/definition.js";
import { readChangeSet, type ChangeSet } from "../../review/change-set.js";
import { fileDiff, firstRowOf, intentDiff, sessionDiff, type DiffSet } from "../../review/diffs.js";
import { MAX_DIFF_PAGE_BYTES, MIN_DIFF_PAGE_BYTES, pageOf } from "../../review/page.js";
import { runtimeOf } from "../journal/context.js";
import { CALL_ID_PATTERN } from "../journal/controls.js";
import { canonicalOf, notFound } from "./revert.js";

/** Intents and files listed one by one in a change set answer; the rest are counted. */
const MAX_LISTED_INTENTS = 100;
const MAX_LISTED_FILES = 200;

const FINGERPRINT_PATTERN = /^[0-9a-f]{32}$/;

const side = z.strictObject({
  size: z.number().int(),
  fingerprint: z.string().describe("First 32 hex digits of the content's sha256, as /r shows it."),
  mode: z.number().int().optional(),
  encoding: z.string().optional(),
  newline: z.string().optional(),
});
const kind = z.enum(["created", "modified", "deleted", "moved_from", "moved_to", "unchanged"]);
const change = z.strictObject({
  path: z.string(),
  change: kind,
  moved: z.string().optional().describe("A move's other path."),
  before: side.optional(),
  after: side.optional(),
  detailDropped: z.literal(true).optional().describe("Contents dropped past the review budget: no diff or revert."),
});

export const changesOutput = z.strictObject({
  ok: z.literal(true),
  intents: z
    .array(
      z.strictObject({
        callId: z.string(),
        tool: z.string(),
        changedAt: z.string(),
        files: z.array(change),
      }),
    )
    .optional()
    .describe(`Change set: each call that changed files, oldest first (the first ${MAX_LISTED_INTENTS}).`),
  files: z
    .array(
      change.extend({
        intents: z.array(z.string()).optional(),
        added: z.number().int().optional(),
        removed: z.number().int().optional(),
        binary: z.literal(true).optional(),
      }),
    )
    .optional()
    .describe(
      `Each file changed: the net change over the session (first ${MAX_LISTED_FILES}); with a diff, its line counts.`,
    ),
  notices: z
    .array(z.strictObject({ callId: z.string(), tool: z.string(), changedAt: z.string(), notice: z.string() }))
    .optional()
    .describe("What the change set could not record, per call (a terminal command past the checkpoint budget)."),
  notListed: z.number().int().optional().describe("Intents and files beyond those listed."),
  truncated: z.literal(true).optional().describe("The session has more changes than one answer reads."),
  diff: z
    .string()
    .optional()
    .describe("A page of the exact unified diff (newlines as in the file; a CRLF line ends in \\r)."),
  offset: z.number().int().optional(),
  end: z.number().int().optional(),
  total: z.number().int().optional().describe("UTF-8 bytes of the whole diff."),
  fingerprint: z.string().optional().describe("Of the whole diff: pass it with offset= for the next page."),
  next: z.string().optional().describe("The next page's URL, while the diff is not complete."),
});
export type ChangesOutput = z.infer<typeof changesOutput>;

export const changesTool = defineTool({
  id: "changes",
  route: "c",
  longRoutes: ["review", "diff"],
  capability: "mutation",
  description:
    "This session's changes: no args lists each call and file it changed; intent=<callId> or path= gives the exact diff (diff=1 for every file), paged.",
  example: "/c?path=src/app.ts",
  schema: z.object({
    intent: z.string().regex(CALL_ID_PATTERN).optional(),
    path: z.string().optional(),
    since: z.string().regex(CALL_ID_PATTERN).optional(),
    diff: z.boolean().optional(),
    offset: z.number().int().min(0).optional(),
    fingerprint: z.string().regex(FINGERPRINT_PATTERN).optional(),
    max: z.number().int().min(MIN_DIFF_PAGE_BYTES).max(MAX_DIFF_PAGE_BYTES).optional(),
  }),
  output: changesOutput,
  url: { aliases: { call_id: "intent", file: "path" } },
  journal: { record: false },
  execute(args, ctx) {
    const { store } = runtimeOf(ctx);
    if (args.intent === undefined && args.path === undefined && !args.diff) {
      return listing(readChangeSet(store.changes, ctx.session.id));
    }
    const path = args.path === undefined ? undefined : canonicalOf(ctx, args.path);
    let since: number | undefined;
    if (args.since !== undefined) {
      since = firstRowOf(store.changes, ctx.session.id, args.since);
      if (since === undefined) throw notFound({ since: args.since }, ctx);
    }
    const set =
      args.intent !== undefined
        ? intentDiff(store.changes, ctx.session.id, args.intent, path)
        : path !== undefined
          ? fileDiff(store.changes, ctx.session.id, path, since)
          : sessionDiff(store.changes, ctx.session.id, since);
    if (!set) throw notFound({ ...(args.intent ? { callId: args.intent } : {}), ...(path ? { path } : {}) }, ctx);
    return diffPage(ctx, set, args.offset ?? 0, args.max ?? MAX_DIFF_PAGE_BYTES, args.fingerprint);
  },
});

function listing(set: ChangeSet): ChangesOutput {
  const notListed =
    Math.max(0, set.intents.length - MAX_LISTED_INTENTS) + Math.max(0, set.files.length - MAX_LISTED_FILES);
  return {
    ok: true,
    intents: set.intents.slice(0, MAX_LISTED_INTENTS),
    files: set.files.slice(0, MAX_LISTED_FILES),
    ...(set.notices ? { notices: set.notices.slice(-MAX_LISTED_INTENTS) } : {}),
    ...(notListed > 0 ? { notListed } : {}),
    ...(set.truncated ? { truncated: true as const } : {}),
  };
}

function diffPage(ctx: ToolContext, set: DiffSet, offset: number, max: number, fingerprint?: string): ChangesOutput {
  const page = pageOf(set.text, offset, max);
  if (fingerprint !== undefined && fingerprint !== page.fingerprint) {
    throw new ToolError(
      ErrorCode.pageChanged,
      `This diff changed since the page that gave fingerprint ${fingerprint} (the file changed again); start again from offset 0 without a fingerprint.`,
      { detail: { fingerprint: page.fingerprint }, retryable: false },
    );
  }
  const next = page.complete
    ? undefined
    : ctx.urls.repair({
        drop: ["offset", "fingerprint"],
        add: [
          ["offset", String(page.end)],
          ["fingerprint", page.fingerprint],
        ],
      });
  return {
    ok: true,
    files: set.files
      .map((f) => ({
        path: f.path,
        change: f.change,
        ...(f.from ? { moved: f.from } : {}),
        ...(f.diff.before ? { before: f.diff.before } : {}),
        ...(f.diff.after ? { after: f.diff.after } : {}),
        ...(f.diff.kind === "text" ? { added: f.diff.added, removed: f.diff.removed } : {}),
        ...(f.diff.kind === "binary" ? { binary: true as const } : {}),
        ...(f.diff.kind === "dropped" ? { detailDropped: true as const } : {}),
      }))
      .slice(0, MAX_LISTED_FILES),
    diff: page.content,
    offset: page.offset,
    end: page.end,
    total: page.total,
    fingerprint: page.fingerprint,
    ...(next ? { next } : {}),
  };
}
