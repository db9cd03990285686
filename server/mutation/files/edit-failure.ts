// Why an /e did not apply when old occurs nowhere: the answer shows the nearest current lines (searched off the
// event loop within bounds: nearest-search.ts) and, when they clearly win, a retry guarded to exactly them
// (edit-guard.ts); past the search's bounds, how to find the lines instead.
import { ErrorCode, ToolError } from "../../errors.js";
import type { ToolContext } from "../../kernel/tool/definition.js";
import { MAX_REQUEST_TARGET_BYTES } from "../../url-grammar/limits.js";
import { deriveRunNonce } from "../journal/call-id.js";
import { intentOf } from "../journal/context.js";
import { marginOf, retryRefusal, type NearestLines } from "./nearest-lines.js";
import { findNearest, MAX_NEAREST_CHARS, type NearestSkip } from "./nearest-search.js";
import { findOccurrences, lineAt } from "./text-match.js";

/**
 * old does not occur. The answer shows the nearest current lines (searched off the event loop, within bounds:
 * nearest-search.ts); when they clearly beat every other window and occur once, a retry replaces exactly them
 * with the same new text, guarded to them (a retry repeating the same old could never succeed).
 */
export async function noMatchError(
  ctx: ToolContext,
  display: string,
  text: string,
  old: string,
  replacement: string,
  read: string,
): Promise<ToolError> {
  const outcome = await findNearest(text, old, ctx.signal);
  const search = "search" in outcome ? outcome.search : undefined;
  const nearest = search?.nearest;
  const loose = search?.looseLines ?? [];
  const skipped = "skipped" in outcome ? outcome.skipped : undefined;
  // new already in the file: most likely this change was applied before (by an earlier call or someone else).
  const applied = replacement.length > 0 ? findOccurrences(text, replacement, 1)[0] : undefined;
  const refusal = search ? retryRefusal(search) : undefined;
  // The window a guarded retry may target: it clearly wins, occurs once, and is not the refused old again.
  const target =
    nearest &&
    applied === undefined &&
    refusal === undefined &&
    nearest.text !== old &&
    findOccurrences(text, nearest.text, 2).length === 1
      ? nearest
      : undefined;
  const retry = target ? nearestRetry(ctx, target) : undefined;
  // A call that did not come as a URL (MCP) gets the same guarded edit as arguments instead.
  const retryArguments =
    target && ctx.urls.repair({}) === undefined
      ? { old: target.text, atLine: target.startLine, blockHash: target.hash }
      : undefined;
  const grep = skipped ? grepUrl(ctx, display, old) : undefined;
  const where = nearest
    ? ` The nearest current lines are ${nearest.startLine}-${nearest.endLine} (excerpt; similarity ${nearest.similarity}${nearest.runnerUp ? `, next best lines ${nearest.runnerUp.startLine}-${nearest.runnerUp.startLine + nearest.endLine - nearest.startLine} at ${nearest.runnerUp.similarity}` : ""}).`
    : skipped
      ? ` ${skippedText(skipped)}`
      : ` ${display} is empty.`;
  const find = ` Find the lines with grep (it searches ${display} for old's first line) or read a range of lines, then send /e with old copied exactly.`;
  const next =
    applied !== undefined
      ? ` new already occurs at line ${lineAt(text, applied)}: the change looks applied; read to check before changing anything.${skipped ? find : ""}`
      : retry
        ? ` If they are the lines you meant, fetch retry: it replaces exactly lines ${nearest!.startLine}-${nearest!.endLine} with your new text, and refuses (edit_target_changed) if they moved or changed; otherwise copy old from read.`
        : retryArguments
          ? ` If they are the lines you meant, send the same edit with retryArguments (old set to those lines, guarded by atLine and blockHash): it replaces exactly lines ${nearest!.startLine}-${nearest!.endLine} and refuses (edit_target_changed) if they moved or changed; otherwise copy old from the file.`
          : skipped
            ? find
            : ` No retry${nearest && refusal ? ` (${refusal})` : ""}: copy old exactly from read (newline style does not matter), then try again.`;
  return new ToolError(
    ErrorCode.editNoMatch,
    (loose.length > 0
      ? `old does not occur in ${display} exactly, but matches ignoring indentation/trailing spaces at line ${loose.join(", ")}.`
      : `old does not occur in ${display}.`) +
      where +
      next,
    {
      detail: {
        path: display,
        occurrences: 0,
        ...(loose.length > 0 ? { looseMatchLines: loose } : {}),
        ...(applied !== undefined ? { newAlreadyAtLine: lineAt(text, applied) } : {}),
        ...(nearest
          ? { nearest: nearestDetail(nearest, search!.complete, retry !== undefined || retryArguments !== undefined) }
          : {}),
        ...(skipped
          ? {
              nearestSkipped: skipped,
              ...(skipped === "file_too_large" ? { nearestLimitChars: MAX_NEAREST_CHARS } : {}),
            }
          : {}),
      },
      agentAction: "reread_then_retry",
      extra: {
        read,
        ...(grep ? { grep } : {}),
        ...(nearest ? { excerpt: nearest.excerpt, excerptStartLine: nearest.excerptStartLine } : {}),
        ...(retry ? { retry } : {}),
        ...(retryArguments ? { retryArguments } : {}),
      },
    },
  );
}

function nearestDetail(nearest: NearestLines, complete: boolean, retried: boolean): Record<string, unknown> {
  return {
    startLine: nearest.startLine,
    endLine: nearest.endLine,
    similarity: nearest.similarity,
    ...(nearest.runnerUp ? { runnerUp: nearest.runnerUp } : {}),
    margin: marginOf(nearest),
    ...(complete ? {} : { complete: false }),
    // The guard a retry carries, so a client without the URL (MCP) can send the same guarded edit.
    ...(retried ? { atLine: nearest.startLine, blockHash: nearest.hash } : {}),
  };
}

function skippedText(skipped: NearestSkip): string {
  switch (skipped) {
    case "file_too_large":
      return `The file is over the ${MAX_NEAREST_CHARS / (1024 * 1024)} Mi characters the nearest-lines search reads, so no nearest lines are shown.`;
    case "timed_out":
      return "The nearest-lines search ran out of time, so no nearest lines are shown.";
    case "failed":
      return "The nearest-lines search failed (it is bounded in memory), so no nearest lines are shown.";
  }
}

/** A /g URL for old's first non-blank line (trimmed, at most 200 characters) in this file. */
function grepUrl(ctx: ToolContext, display: string, old: string): string | undefined {
  const line = old
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  return line === undefined ? undefined : ctx.urls.to("r", "g", [["path", display]], line.slice(0, 200));
}

/**
 * The same /e with old set to the nearest window's exact text, guarded to it (atLine, blockHash). undefined when
 * not a URL call or when the URL would be too long.
 */
function nearestRetry(ctx: ToolContext, nearest: NearestLines): string | undefined {
  const callId = intentOf(ctx).callId;
  const retry = ctx.urls.repair({
    drop: ["old", "oldBlob", "oldCount", "atLine", "blockHash", "run", "call"],
    add: [
      ["old", nearest.text],
      ["atLine", String(nearest.startLine)],
      ["blockHash", nearest.hash],
      ["run", deriveRunNonce(callId, `nearest@${nearest.startLine}`)],
    ],
  });
  // A retry the gateway itself would refuse as too long is no repair: then only the excerpt and read are offered.
  return retry !== undefined &&
    Buffer.byteLength(new URL(retry).pathname + new URL(retry).search) <= MAX_REQUEST_TARGET_BYTES
    ? retry
    : undefined;
}
