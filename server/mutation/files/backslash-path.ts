// A Windows-style path given to a tool that creates (src\new.py): on Linux a backslash is an ordinary character, so
// it would create one file literally named "src\new.py" at the top of the project (issue 27, noticed in round 3).
// Refused with the forward-slash path, and over URLs the exact repair URL; an existing file of that name is kept.
import { ErrorCode, ToolError } from "../../errors.js";
import type { ToolContext } from "../../kernel/tool/definition.js";
import type { HeldPath } from "../../sandbox/fd-walk.js";

/** The URL keys a file tool's path arrives under (write and edit's aliases). */
const PATH_KEYS = ["path", "file", "filePath"];

/** The path with each backslash read as a folder separator, as the agent meant it. */
export function forwardSlashes(input: string): string {
  return input.replace(/\\+/g, "/");
}

/** Refuses creating `target` when the path the agent gave holds a backslash (a path that exists is not refused). */
export function refuseBackslashCreate(ctx: ToolContext | undefined, input: string, target: HeldPath): void {
  if (target.exists || !input.includes("\\")) return;
  const meant = forwardSlashes(input);
  const repair = ctx?.urls.repair({ drop: PATH_KEYS, add: [["path", meant]] });
  throw new ToolError(
    ErrorCode.invalidPath,
    `${input} holds a backslash, and paths here use /: it would create one file literally named "${target.name}". Send it again with the path ${meant}.${repair ? " Fetch repair to do so." : ""}`,
    { detail: { path: input, meant }, retryable: false, ...(repair ? { repair } : {}) },
  );
}
