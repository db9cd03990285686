// Preflight of a parsed patch: resolves and checks every path, reads every file, locates every hunk and
// computes every new file, capturing preimages as it goes. Nothing is written; any failure names its op.
import { ErrorCode, isToolError, ToolError } from "../../../errors.js";
import type { ToolContext } from "../../../kernel/tool/definition.js";
import { readHeldFile } from "../../../sandbox/fd-ops.js";
import { walkInsideRoot, type HeldPath } from "../../../sandbox/fd-walk.js";
import type { Preimage } from "../../../store/journal.js";
import { capturePreimages } from "../../journal/preimages.js";
import { requireAgentMay } from "../agent-permission.js";
import { refuseBackslashCreate } from "../backslash-path.js";
import { decodeForEdit, encodeText } from "../../../text/index.js";
import { applyHunks, linesToText, splitLines } from "./apply-hunks.js";
import { wholeFileDiff, type FileDiff } from "../edit-diff.js";
import { normalizeNewlines } from "../text-match.js";
import { locateHunks, type MatchKind } from "./locate.js";
import { PLUS_HINT, type PatchOp } from "./parse.js";

/** A path as planning resolved it: canonical, so the commit walks it again refusing any symlink on the way. */
export interface PlannedPath {
  absolute: string;
  display: string;
}

export interface PlannedChange {
  op: "added" | "updated" | "moved" | "deleted";
  target: PlannedPath;
  /** Source of a move. */
  from?: PlannedPath;
  bytes?: Buffer;
  mode?: number;
  added: number;
  removed: number;
  hunks: Array<{ hunk: number; line: number; match: MatchKind }>;
  /** The change as a unified diff (added, updated and moved files; computed here, before anything is written). */
  diff?: FileDiff | undefined;
}

export interface PatchPlan {
  changes: PlannedChange[];
  preimages: Preimage[];
}

const OP_LABEL = { add: "Add File", delete: "Delete File", update: "Update File" } as const;

function opFailure(
  op: PatchOp,
  index: number,
  error: ToolError,
  detail: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): ToolError {
  const where = `Operation ${index + 1} (${OP_LABEL[op.kind]}: ${op.path}, patch line ${op.patchLine})`;
  return new ToolError(error.code, `${where}: ${error.message} Nothing was written.`, {
    detail: {
      operation: index + 1,
      kind: op.kind,
      path: op.path,
      patchLine: op.patchLine,
      ...detail,
      ...(error.detail === undefined ? {} : { cause: error.detail }),
    },
    retryable: error.retryable,
    agentAction: error.agentAction,
    extra: { ...error.extra, ...extra },
  });
}

export async function planPatch(ctx: ToolContext, ops: PatchOp[]): Promise<PatchPlan> {
  const changes: PlannedChange[] = [];
  const preimages = new Map<string, Preimage>();
  const claimed = new Map<string, number>();
  const claim = (op: PatchOp, index: number, p: PlannedPath) => {
    const earlier = claimed.get(p.absolute);
    if (earlier !== undefined) {
      throw opFailure(
        op,
        index,
        new ToolError(
          ErrorCode.patchPathConflict,
          `${p.display} is already touched by operation ${earlier + 1}; touch each path once per patch.`,
          { retryable: false },
        ),
      );
    }
    claimed.set(p.absolute, index);
  };
  const remember = (items: Preimage[]) => items.forEach((p) => preimages.has(p.path) || preimages.set(p.path, p));

  const held: HeldPath[] = [];
  /** "existing": the path must be there; "create": the operation creates it when missing. */
  const hold = (input: string, need: "existing" | "create"): HeldPath => {
    const target = walkInsideRoot(
      ctx.project.root,
      input,
      need === "create" ? { creating: true } : { allowMissing: false },
    );
    held.push(target);
    return target;
  };
  try {
    for (const [index, op] of ops.entries()) {
      try {
        if (op.kind === "add") {
          const target = hold(op.path, "create");
          claim(op, index, target);
          if (target.exists)
            throw new ToolError(
              ErrorCode.patchTargetExists,
              `${target.display} already exists and Add File never overwrites: change it with "*** Update File: ${target.display}", or replace it whole with /w after reading it.`,
              { retryable: false },
            );
          refuseBackslashCreate(undefined, op.path, target);
          requireAgentMay(ctx, target, "write");
          remember(await capturePreimages(target));
          const text = linesToText(op.lines);
          const diff = wholeFileDiff(target.display, "", normalizeNewlines(text));
          changes.push({
            op: "added",
            target: planned(target),
            bytes: Buffer.from(text, "utf8"),
            added: op.lines.length,
            removed: 0,
            hunks: [],
            diff,
          });
          continue;
        }
        const source = hold(op.path, "existing");
        claim(op, index, source);
        const info = source.stats!;
        if (!info.isFile())
          throw new ToolError(ErrorCode.notAFile, `${source.display} is not a file.`, { retryable: false });
        const previous = await readHeldFile(source.fd!, info.size);
        const mode = info.mode & 0o7777;
        remember([{ path: source.absolute, kind: "file", mode, content: previous }]);
        if (op.kind === "delete") {
          requireAgentMay(ctx, source, "remove");
          changes.push({
            op: "deleted",
            target: planned(source),
            added: 0,
            removed: splitLines(previous.toString("utf8")).length,
            hunks: [],
          });
          continue;
        }
        // Its content changes, so the file must grant write (a move also takes it out of its folder, below).
        if (op.hunks.length > 0) requireAgentMay(ctx, source, "write");
        const decoded = decodeForEdit(previous, source.display);
        const located = locateHunks(
          splitLines(decoded.text).map((l) => l.text),
          op.hunks,
        );
        if (!located.ok) {
          const hunk = op.hunks[located.hunkIndex]!;
          const spaced =
            hunk.lines.some((l) => l.op === " ") && !op.hunks.some((h) => h.lines.some((l) => l.op === "+"));
          // No retry URL: the same patch against the same file fails the same way (issue 27 item 3); the agent
          // sends a corrected patch after read.
          throw opFailure(
            op,
            index,
            new ToolError(
              ErrorCode.patchHunkNotFound,
              `hunk ${located.hunkIndex + 1} (patch line ${hunk.patchLine}) does not apply: ${located.reason}. Fetch read, copy its lines exactly into the hunk and send the corrected patch.${spaced ? PLUS_HINT : ""}`,
              {
                agentAction: "reread_then_retry",
              },
            ),
            { hunk: located.hunkIndex + 1, hunkPatchLine: hunk.patchLine },
            { read: ctx.urls.to("r", "r", [["path", source.display]]) },
          );
        }
        const applied = applyHunks(decoded, located.located);
        const hunks = located.located.map((l, i) => ({ hunk: i + 1, line: l.start + 1, match: l.match }));
        const bytes = encodeText(applied.text, decoded.encoding);
        let target = planned(source);
        let from: PlannedPath | undefined;
        if (op.moveTo !== undefined) {
          const dest = hold(op.moveTo, "create");
          if (dest.absolute !== source.absolute) {
            claim(op, index, dest);
            if (dest.exists)
              throw new ToolError(
                ErrorCode.patchTargetExists,
                `move destination ${dest.display} already exists and Move to never overwrites: delete it first ("*** Delete File: ${dest.display}" in its own patch), then send this patch again.`,
                { retryable: false },
              );
            refuseBackslashCreate(undefined, op.moveTo, dest);
            requireAgentMay(ctx, source, "remove");
            requireAgentMay(ctx, dest, "write");
            remember(await capturePreimages(dest));
            target = planned(dest);
            from = planned(source);
          }
        }
        const diff = wholeFileDiff(
          target.display,
          normalizeNewlines(decoded.text),
          normalizeNewlines(applied.text),
          from?.display,
        );
        changes.push({
          op: from ? "moved" : "updated",
          target,
          ...(from ? { from } : {}),
          bytes,
          mode,
          added: applied.added,
          removed: applied.removed,
          hunks,
          diff,
        });
      } catch (error) {
        if (isToolError(error) && (error.detail as { operation?: number } | undefined)?.operation !== undefined)
          throw error;
        if (isToolError(error)) throw opFailure(op, index, error);
        throw error;
      } finally {
        // Each operation's descriptors go before the next: a patch may name many files.
        for (const target of held.splice(0)) target.close();
      }
    }
  } finally {
    for (const target of held) target.close();
  }
  return { changes, preimages: [...preimages.values()] };
}

function planned(target: HeldPath): PlannedPath {
  return { absolute: target.absolute, display: target.display };
}
