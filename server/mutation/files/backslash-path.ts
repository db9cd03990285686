// A Windows-style path given to a tool that creates (src\new.py): on Linux a backslash is an ordinary character, so
// it would create one file literally named "src\new.py" beside src/ (issue 27, noticed in round 3). Refused with
// the forward-slash path, and over URLs the exact repair URL, when src/ exists; other names are created as given.
import { ErrorCode, ToolError } from "../../errors.js";
import type { ToolContext } from "../../kernel/tool/definition.js";
import { lstatInDirectory } from "../../sandbox/fd-ops.js";
import type { HeldPath } from "../../sandbox/fd-walk.js";

/** The URL keys a file tool's path arrives under (write and edit's aliases). */
const PATH_KEYS = ["path", "file", "filePath"];

/** The path with each backslash read as a folder separator, as the agent meant it. */
export function forwardSlashes(input: string): string {
  return input.replace(/\\+/g, "/");
}

/**
 * Refuses creating `target` when its new name holds a backslash and what comes before the first one is a folder
 * beside it (src\new.py where src/ exists): the evidence that a separator was meant. Without it (a"b\c, C:\x) the
 * name is taken as given, as any name may hold a backslash on Linux; a path that exists is never refused.
 */
export function refuseBackslashCreate(ctx: ToolContext | undefined, input: string, target: HeldPath): void {
  if (target.exists || target.pending.length !== 1 || !target.name.includes("\\")) return;
  const folder = target.name.split("\\")[0]!;
  if (folder === "" || !lstatInDirectory(target.dirFd, folder)?.isDirectory()) return;
  const meant = forwardSlashes(input);
  const repair = ctx?.urls.repair({ drop: PATH_KEYS, add: [["path", meant]] });
  throw new ToolError(
    ErrorCode.invalidPath,
    `${input} holds a backslash, and paths here use /: it would create one file literally named "${target.name}". Send it again with the path ${meant}.${repair ? " Fetch repair to do so." : ""}`,
    { detail: { path: input, meant }, retryable: false, ...(repair ? { repair } : {}) },
  );
}
