// `urlbridge worktree show|merge|keep|discard <session>`: a worktree session's branch against its base and the
// operator's decision on it, over the control API (/api/sessions/:id/worktree and its merge, keep, discard).
import type { Config } from "../config.js";
import type { WorktreeMergeView, WorktreeSessionView } from "../control/api-types.js";
import type { ParsedCommand } from "./args.js";
import { CliError } from "./cli-error.js";
import { hint, type Print } from "./commands.js";
import { createControlClient } from "./control-client.js";
import { findSession } from "./find-session.js";

const MODES = ["auto", "merge", "squash"];
/** Most diff pages one `worktree show --path` follows (32 KiB each). */
const MAX_PAGES = 1000;

function describe(view: WorktreeSessionView, config: Config, session: string): string {
  const state = view.branchHead
    ? `${view.ahead} ahead, ${view.behind} behind ${view.baseRef}; ${view.fastForward ? "merges as a fast-forward" : view.conflicts.length > 0 ? `conflicts in ${view.conflicts.length} path(s)` : view.ahead > 0 ? "needs a merge commit" : "nothing to merge"}`
    : "branch removed";
  return [
    `${view.branch} (from ${view.baseRef})  ${state}`,
    `worktree ${view.path}${view.present ? "" : " (removed)"}${view.outcome ? `  outcome: ${view.outcome}` : ""}`,
    ...view.files.map((f) => `    ${f.status} ${f.from ? `${f.from} -> ` : ""}${f.path}`),
    ...(view.conflicts.length > 0 ? ["Conflicts:", ...view.conflicts.map((p) => `    ${p}`)] : []),
    ...(view.uncommitted.length > 0 ? ["Not committed (not merged):", ...view.uncommitted.map((p) => `    ${p}`)] : []),
    "",
    `Diff: ${hint(config, `worktree show ${session} --path <p>`)}   Merge: ${hint(config, `worktree merge ${session}`)}`,
  ].join("\n");
}

async function showDiff(client: ReturnType<typeof createControlClient>, base: string, path: string): Promise<string> {
  let text = "";
  let offset = 0;
  let fingerprint: string | undefined;
  for (let n = 0; n < MAX_PAGES; n++) {
    const q = new URLSearchParams({ path, offset: String(offset), ...(fingerprint ? { fingerprint } : {}) });
    const view = await client.request<WorktreeSessionView>("GET", `${base}?${q.toString()}`);
    const page = view.diff!;
    text += page.content;
    if (page.complete || page.end >= page.total) break;
    offset = page.end;
    fingerprint = page.fingerprint;
  }
  return text.replace(/\n$/, "");
}

export async function runWorktreeCommand(config: Config, cmd: ParsedCommand, print: Print): Promise<void> {
  const mode = cmd.flags.mode ?? "auto";
  if (!MODES.includes(mode)) throw new CliError(`--mode is auto, merge or squash; got "${mode}"`);
  const client = createControlClient(config);
  const session = await findSession(client, cmd.args[0]!, hint(config, "session list"));
  const base = `/api/sessions/${encodeURIComponent(session.id)}/worktree`;
  const json = (value: unknown) => print(JSON.stringify(value, null, 2));
  switch (cmd.command) {
    case "worktree show": {
      if (cmd.flags.path) return print(await showDiff(client, base, cmd.flags.path));
      const view = await client.request<WorktreeSessionView>("GET", base);
      return cmd.flags.json ? json(view) : print(describe(view, config, cmd.args[0]!));
    }
    case "worktree merge": {
      const done = await client.request<WorktreeMergeView>("POST", `${base}/merge`, { mode });
      return cmd.flags.json
        ? json(done)
        : print(
            done.kind === "already-merged"
              ? `${done.branch} was already merged into ${done.baseRef} (${done.commit.slice(0, 12)}); recorded as merged.`
              : `${done.baseRef} is now ${done.commit.slice(0, 12)} (${done.kind} of ${done.branch}).`,
          );
    }
    case "worktree keep": {
      const done = await client.request<{ branch: string }>("POST", `${base}/keep`);
      return cmd.flags.json ? json(done) : print(`Kept ${done.branch}: deleting the session leaves the branch.`);
    }
    default: {
      const done = await client.request<{ branch: string; path: string }>("POST", `${base}/discard`);
      return cmd.flags.json ? json(done) : print(`Discarded ${done.branch}; removed ${done.path}.`);
    }
  }
}
