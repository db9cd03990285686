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

/** Refuses unless old matches once, starting line guard.atLine, with the same lines around it as when guarded. */
export function checkGuard(
  ctx: ToolContext,
  display: string,
  text: string,
  old: string,
  hits: number[],
  guard: EditGuard,
): void {
  const refuse = (reason: "changed" | "moved" | "not_unique" | "context_changed", why: string, found?: number[]) => {
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
  };
  if (hits.length === 0) throw refuse("changed", "old no longer occurs: those lines changed");
  if (hits.length > 1)
    throw refuse(
      "not_unique",
      `old now occurs ${hits.length} times`,
      hits.slice(0, 20).map((h) => lineAt(text, h)),
    );
  const at = hits[0]!;
  const line = lineAt(text, at);
  if (line !== guard.atLine) throw refuse("moved", `old now occurs at line ${line} instead`, [line]);
  if (at > 0 && text.charCodeAt(at - 1) !== 10) throw refuse("changed", "old now starts inside a longer line there");
  if (guard.blockHash === undefined) return;
  const size = (old.endsWith("\n") ? old.slice(0, -1) : old).split("\n").length;
  if (blockHash(text, at, size) !== guard.blockHash)
    throw refuse("context_changed", "the lines around it changed since");
}
