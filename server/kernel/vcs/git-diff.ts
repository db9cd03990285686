// /v?op=diff: what changed between two sides (working tree vs index by default; staged; the working tree vs a
// revision; two revisions). Without path= it lists the files with their line counts; with path= it answers the
// patch of that file or folder. Either way git's whole answer is read once, so the fingerprint covers every byte.
import { z } from "zod";
import { runGit, type GitCall } from "./git-command.js";

export const diffFile = z.strictObject({
  path: z.string().describe("Path from the project root (the new path of a rename)."),
  from: z.string().optional().describe("Renamed: the earlier path."),
  added: z.number().int().optional().describe("Lines added; absent for a binary file."),
  deleted: z.number().int().optional().describe("Lines deleted; absent for a binary file."),
  binary: z.literal(true).optional().describe("Present for a binary file (no line counts, no text patch)."),
});

export type DiffFile = z.infer<typeof diffFile>;

export interface DiffSides {
  rev?: string | undefined;
  to?: string | undefined;
  staged: boolean;
}

/** In words, which two sides were compared. */
export function describeSides(sides: DiffSides): string {
  if (isRange(sides.rev))
    return `${sides.rev} (a range: ${sides.rev!.includes("...") ? "the right side since the merge base" : "left vs right"})`;
  if (sides.to !== undefined) return `${sides.rev ?? "HEAD"} vs ${sides.to}`;
  if (sides.staged) return `index (staged) vs ${sides.rev ?? "HEAD"}`;
  if (sides.rev !== undefined) return `working tree vs ${sides.rev}`;
  return "working tree vs index (unstaged)";
}

/** rev=a..b or a...b: two revisions in one argument (a...b: b against the merge base of a and b). */
export function isRange(rev: string | undefined): boolean {
  return rev !== undefined && rev.includes("..");
}

/** git diff's arguments for the sides, and whether git reads the working tree for them. */
function diffArgs(sides: DiffSides, relative: string | undefined): { args: string[]; worktree: boolean } {
  const revs = [
    ...(sides.rev !== undefined || sides.to !== undefined ? [sides.rev ?? "HEAD"] : []),
    ...(sides.to !== undefined ? [sides.to] : []),
  ];
  const args = [
    "diff",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--ignore-submodules=all",
    "-M",
    "-z",
    "--numstat",
    "-p",
    ...(sides.staged ? ["--cached"] : []),
    ...(revs.length > 0 ? ["--end-of-options", ...revs] : []),
    "--",
    ...(relative !== undefined ? [relative] : []),
  ];
  return { args, worktree: !sides.staged && sides.to === undefined && !isRange(sides.rev) };
}

/** Splits `--numstat -z -p` output: numstat records, an empty record, then the patch text. */
export function parseDiff(text: string): { files: DiffFile[]; patch: string } {
  const files: DiffFile[] = [];
  let at = 0;
  const next = (): string | undefined => {
    const end = text.indexOf("\0", at);
    if (end < 0) return undefined;
    const record = text.slice(at, end);
    at = end + 1;
    return record;
  };
  for (let record = next(); record !== undefined && record !== ""; record = next()) {
    const match = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(record);
    if (!match) break;
    const [, added, deleted, name] = match as unknown as [string, string, string, string];
    // A rename: the path field is empty and the old and new paths follow as two records.
    const from = name === "" ? next() : undefined;
    const path = name === "" ? (next() ?? "") : name;
    const counts = added === "-" ? { binary: true as const } : { added: Number(added), deleted: Number(deleted) };
    files.push({ path, ...(from !== undefined ? { from } : {}), ...counts });
  }
  return { files, patch: text.slice(at) };
}

export async function readDiff(
  call: GitCall,
  sides: DiffSides,
  relative: string | undefined,
): Promise<{ files: DiffFile[]; patch: string; whole: string }> {
  const { args, worktree } = diffArgs(sides, relative);
  const output = await runGit(call, args, { worktree, subject: { rev: sides.to ?? sides.rev } });
  const whole = output.stdout.toString("utf8");
  return { ...parseDiff(whole), whole };
}
