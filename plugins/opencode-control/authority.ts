// What a call may do in OpenCode, derived from the invoking session's authority (root + permissions): the
// permission ceiling a new worker gets, which OpenCode sessions are visible (canonical directory inside the root),
// and who may prompt a session urlbridge did not make.
import fs from "node:fs";
import path from "node:path";
import { ErrorCode, ToolError } from "../../server/errors.js";
import type { PluginCallAuthority } from "../../server/plugins/definition.js";
import type { OpenCodeSettings } from "./settings.js";

export interface PermissionRule {
  permission: string;
  pattern: string;
  action: "allow" | "deny" | "ask";
}

/** The permissions a worker was started with, kept in its metadata: a later prompt needs at least these. */
export interface WorkerGrant {
  write: boolean;
  terminal: boolean;
  nested: boolean;
}

export function grantOf(authority: PluginCallAuthority, settings: OpenCodeSettings): WorkerGrant {
  return { write: authority.permissions.write, terminal: authority.permissions.terminal, nested: settings.allowNested };
}

/**
 * The session rules OpenCode applies after the agent's own (the later rule wins there), so each deny is a ceiling:
 * nothing outside the directory, no nested subagents unless allowed, no file changes without write, no shell
 * without terminal, and git (through the shell) only with both.
 */
export function workerRules(grant: WorkerGrant): PermissionRule[] {
  const rules: PermissionRule[] = [{ permission: "external_directory", pattern: "*", action: "deny" }];
  if (!grant.nested) rules.push({ permission: "task", pattern: "*", action: "deny" });
  if (!grant.write)
    for (const permission of ["edit", "write", "patch", "multiedit"])
      rules.push({ permission, pattern: "*", action: "deny" });
  if (!grant.terminal) rules.push({ permission: "bash", pattern: "*", action: "deny" });
  else if (!grant.write)
    for (const pattern of ["git", "git *"]) rules.push({ permission: "bash", pattern, action: "deny" });
  return rules;
}

/** The canonical form of a directory OpenCode reports (it may be gone: then its resolved spelling). */
function canonical(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

export function insideRoot(root: string, dir: string | undefined): boolean {
  if (!dir || !path.isAbsolute(dir)) return false;
  const d = canonical(dir);
  return d === root || d.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/** The "/project/..." spelling of a directory inside the root, as agents see paths. */
export function displayOf(authority: PluginCallAuthority, dir: string): string {
  const rel = path.relative(authority.root, canonical(dir));
  return rel === "" ? authority.display : `${authority.display}/${rel.split(path.sep).join("/")}`;
}

/** A worker may be prompted again only by a session with at least the authority it was started with. */
export function assertCovers(authority: PluginCallAuthority, grant: WorkerGrant | undefined, what: string): void {
  const needed = grant ?? { write: true, terminal: true, nested: false };
  const missing = (["write", "terminal"] as const).filter((p) => needed[p] && !authority.permissions[p]);
  if (missing.length === 0) return;
  throw new ToolError(
    ErrorCode.opencodeRefused,
    `${what} runs with the project's ${missing.join(" and ")} permission, which this session does not have; nothing was sent.`,
    {
      detail: { missing },
      agentAction: "enable_in_control_plane",
    },
  );
}

/** Prompting or resuming a session urlbridge did not make: the setting, plus both write and terminal. */
export function assertMayPromptExisting(authority: PluginCallAuthority, settings: OpenCodeSettings): void {
  if (!settings.allowExisting) {
    throw new ToolError(
      ErrorCode.opencodeRefused,
      "Prompting existing OpenCode sessions is switched off (URLBRIDGE_OPENCODE_ALLOW_EXISTING=false); start a worker instead. Nothing was sent.",
      {
        detail: { setting: "URLBRIDGE_OPENCODE_ALLOW_EXISTING" },
      },
    );
  }
  assertCovers(authority, undefined, "An existing OpenCode session keeps its own permissions, so prompting it");
}
