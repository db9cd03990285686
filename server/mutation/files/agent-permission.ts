// The file tools' permission check (issue 27 item 5): a change the agent's own terminal would be refused
// ("Permission denied") is refused with permission_denied before anything is written, naming the fix.
// The rules live in server/sandbox/agent-access.ts; this module words them for the agent.
import path from "node:path";
import { ErrorCode, ToolError } from "../../errors.js";
import type { ToolContext } from "../../kernel/tool/definition.js";
import {
  agentWriterFor,
  refusalToCreateIn,
  refusalToRemove,
  refusalToReplace,
  type AccessDenial,
  type AgentWriter,
} from "../../sandbox/agent-access.js";
import type { HeldPath } from "../../sandbox/fd-walk.js";
import { toDisplayPath } from "../../sandbox/paths.js";
import { intentOf } from "../journal/context.js";

/** The intent's `retry` URL (a fresh run= nonce), when the edge has one. */
export function retryExtra(ctx: ToolContext): Record<string, unknown> {
  const retry = intentOf(ctx).retryUrl();
  return retry ? { retry } : {};
}

export type Change = "write" | "remove";

/** The agent writer of the project a held path is in. */
export function writerOf(ctx: ToolContext, target: HeldPath): AgentWriter {
  return agentWriterFor(target.rootFd, ctx.project.agentFallback);
}

/**
 * Refuses (permission_denied) unless the agent may make `change` at the held target: write replaces an existing
 * file (the file must grant write) or creates a missing one (its deepest existing folder must grant write and
 * search); remove unlinks it from its folder (write and search there, and the sticky-bit rule).
 */
export function requireAgentMay(ctx: ToolContext, target: HeldPath, change: Change, writer = writerOf(ctx, target)) {
  const refused =
    change === "remove"
      ? refusalToRemove(writer, target.dirFd, target.fd!)
      : target.exists
        ? refusalToReplace(writer, target.fd!)
        : refusalToCreateIn(writer, target.dirFd);
  if (refused) throw permissionDenied(ctx, target, refused);
}

/** The folder a denial about the held target's folder names: its own folder, or the deepest one that exists. */
function folderOf(target: HeldPath): string {
  const existing = target.exists ? target.parts.length - 1 : target.parts.length - target.pending.length;
  return path.join(target.root, ...target.parts.slice(0, existing));
}

const octal = (mode: number) => `0${(mode & 0o7777).toString(8).padStart(3, "0")}`;

/**
 * The error for a refused change, with the command that fixes it and who can run it, and the `retry` URL (a fresh
 * run: fetching the same URL again would replay this refusal from the journal) to send once it is fixed.
 */
export function permissionDenied(ctx: ToolContext, target: HeldPath, denial: AccessDenial): ToolError {
  const { agent, owner, mode } = denial;
  const isFile = denial.reason !== "folder_not_writable";
  const absolute = isFile ? target.absolute : folderOf(target);
  const shown = toDisplayPath(target.root, absolute);
  const ownsIt = agent.uid === owner.uid;
  let why: string;
  let fix: string;
  if (denial.reason === "file_read_only") {
    why = `${shown} (owner uid ${owner.uid}, mode ${octal(mode)}) is read-only for uid ${agent.uid}`;
    fix = ownsIt
      ? `if it is meant to change, make it writable first: \`chmod u+w ${shown.replace(/^\/project\/?/, "") || "."}\` in the terminal`
      : `if it is meant to change, the operator runs \`sudo chown ${agent.uid}:${agent.gid} ${absolute}\``;
  } else if (denial.reason === "folder_not_writable") {
    why = `the folder ${shown} (owner uid ${owner.uid}, mode ${octal(mode)}) does not let uid ${agent.uid} create or remove files in it`;
    fix = ownsIt
      ? `make it writable first: \`chmod u+wx ${shown.replace(/^\/project\/?/, "") || "."}\` in the terminal`
      : `the operator runs \`sudo chown ${agent.uid}:${agent.gid} ${absolute}\``;
  } else {
    why = `${shown} belongs to uid ${owner.uid} in a sticky folder (mode ${octal(mode)}), where only a file's owner may remove or rename it`;
    fix = `the operator runs \`sudo chown ${agent.uid}:${agent.gid} ${target.absolute}\``;
  }
  return new ToolError(
    ErrorCode.permissionDenied,
    `Permission denied: ${why}; the agent's terminal is refused the same way. Nothing was written. To fix it, ${fix}. Then fetch retry.`,
    {
      detail: { path: shown, reason: denial.reason, uid: agent.uid, ownerUid: owner.uid, mode: octal(mode) },
      retryable: false,
      agentAction: ownsIt ? "correct_request" : "stop",
      extra: retryExtra(ctx),
    },
  );
}
