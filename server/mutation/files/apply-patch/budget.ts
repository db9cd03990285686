// How many folders one patch may write in. The commit (phases.ts) holds one descriptor per distinct folder it
// stages into or changes, from the first temp file to the last folder's fsync, so that a folder swapped meanwhile is
// caught; a patch over many folders could otherwise exhaust the bridge's descriptors, failing itself half-way (then
// rolled back) and, while it holds them, every other session's calls with EMFILE. A patch over the budget is
// refused before anything is written, with the numbers to split it by.
import path from "node:path";
import { ErrorCode, ToolError } from "../../../errors.js";
import type { PatchPlan } from "./plan.js";

/** The share of the bridge's open-file limit one patch's folders may take: the rest stays for everything else. */
const LIMIT_SHARE = 4;
/** The budget when the limit cannot be read: what a quarter of the usual 1,024 soft limit allows. */
const FALLBACK_BUDGET = 256;

/** The folders a patch may write in, given the bridge's soft open-file limit (undefined: unknown). */
export function directoryBudget(limit: number | undefined): number {
  return limit === undefined ? FALLBACK_BUDGET : Math.max(1, Math.floor(limit / LIMIT_SHARE));
}

/** Every folder the commit of `plan` writes in: each target's and each moved source's. */
function foldersOf(plan: PatchPlan): Set<string> {
  const folders = new Set<string>();
  for (const change of plan.changes) {
    folders.add(path.dirname(change.target.absolute));
    if (change.from) folders.add(path.dirname(change.from.absolute));
  }
  return folders;
}

/** Refuses a plan that writes in more folders than `limit`'s budget (patch_too_large), before its first write. */
export function checkDirectoryBudget(plan: PatchPlan, limit: number | undefined): void {
  const folders = foldersOf(plan).size;
  const budget = directoryBudget(limit);
  if (folders <= budget) return;
  const why = limit === undefined ? "" : ` (a quarter of the bridge's open-file limit, ${limit})`;
  throw new ToolError(
    ErrorCode.patchTooLarge,
    `This patch writes in ${folders} folders; one patch may write in at most ${budget} here${why}. Nothing was written. Split it into patches of at most ${budget} folders each and send them one by one.`,
    {
      detail: { folders, maxFolders: budget, ...(limit === undefined ? {} : { openFileLimit: limit }) },
      retryable: false,
      agentAction: "correct_request",
    },
  );
}
