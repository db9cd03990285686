// The guard a stale /e's retry carries: atLine (where the answer showed the lines) and blockHash (those lines
// and the context around them, as shown). The retry then replaces those lines or nothing: if they moved, changed,
// or old now matches somewhere else (a near-identical neighbour), it refuses with edit_target_changed.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import type { ToolContext } from "../../kernel/tool/definition.js";
import { blockHash, CONTEXT_LINES } from "./nearest-lines.js";
import { lineAt } from "./text-match.js";

export const guardFields = {
  atLine: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Guard: old must match starting at this line, else edit_target_changed (set by a stale edit's retry)."),
  blockHash: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .optional()
    .describe("Guard: fingerprint of old's lines and their context where atLine says (set by a stale edit's retry)."),
};

export interface EditGuard {
  atLine: number;
  blockHash?: string;
}

/** The guard of a call, if it has one; blockHash alone locates nothing and is refused. */
export function guardOf(args: { atLine?: number; blockHash?: string }): EditGuard | undefined {
  if (args.atLine === undefined) {
    if (args.blockHash === undefined) return undefined;
    throw new ToolError(
      ErrorCode.missingParameter,
      "blockHash guards the lines at atLine; give both (as a stale edit's retry does) or neither.",
      {
        detail: { parameter: "atLine" },
      },
    );
  }
  return { atLine: args.atLine, ...(args.blockHash === undefined ? {} : { blockHash: args.blockHash }) };
}

/** Why a guarded edit is refused: what the refusal's answer names (reason, the words, the lines old now occurs at). */
export interface GuardRefusal {
  reason: "changed" | "moved" | "not_unique" | "context_changed";
  why: string;
  found?: number[];
}

/**
 * The refusal of a guarded edit, or undefined when old matches once, starting line guard.atLine, with the same
 * lines around it as when guarded. Pure (no session), so it runs where the edit's text is (edit-plan.ts).
 */
export function guardRefusal(text: string, old: string, hits: number[], guard: EditGuard): GuardRefusal | undefined {
  if (hits.length === 0) return { reason: "changed", why: "old no longer occurs: those lines changed" };
  if (hits.length > 1)
    return {
      reason: "not_unique",
      why: `old now occurs ${hits.length} times`,
      found: hits.slice(0, 20).map((h) => lineAt(text, h)),
    };
  const at = hits[0]!;
  const line = lineAt(text, at);
  if (line !== guard.atLine) return { reason: "moved", why: `old now occurs at line ${line} instead`, found: [line] };
  if (at > 0 && text.charCodeAt(at - 1) !== 10)
    return { reason: "changed", why: "old now starts inside a longer line there" };
  if (guard.blockHash === undefined) return undefined;
  const size = (old.endsWith("\n") ? old.slice(0, -1) : old).split("\n").length;
  if (blockHash(text, at, size) !== guard.blockHash)
    return { reason: "context_changed", why: "the lines around it changed since" };
  return undefined;
}

/** The answer refusing a guarded edit: edit_target_changed, with a read of the lines around atLine. */
export function guardError(
  ctx: ToolContext,
  display: string,
  old: string,
  guard: EditGuard,
  { reason, why, found }: GuardRefusal,
): ToolError {
  const from = Math.max(1, guard.atLine - CONTEXT_LINES - 3);
  const read = ctx.urls.to("r", "r", [
    ["path", display],
    ["offset", from],
    ["limit", 2 * CONTEXT_LINES + 6 + old.split("\n").length],
  ]);
  return new ToolError(
    ErrorCode.editTargetChanged,
    `This edit is guarded to the lines an earlier answer showed at line ${guard.atLine} of ${display}, and ${why}; nothing was changed. Read the file again (read) and send a new /e with old copied from what is there now.`,
    {
      detail: { path: display, atLine: guard.atLine, reason, ...(found ? { foundAtLines: found } : {}) },
      agentAction: "reread_then_retry",
      extra: { read },
    },
  );
}
