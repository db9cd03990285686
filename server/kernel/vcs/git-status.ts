// /v?op=status: the branch and what differs from it, one row per path and side: staged (index vs HEAD),
// unstaged (working tree vs index), untracked, conflict. Read from `git status --porcelain=v2 -z`.
import { z } from "zod";
import { runGit, type GitCall } from "./git-command.js";

export const headOutput = z
  .strictObject({
    branch: z.string().optional().describe("The checked-out branch; absent when HEAD is detached."),
    commit: z.string().optional().describe("HEAD's commit; absent in a repository without commits."),
    upstream: z.string().optional().describe("The branch's upstream, when set."),
    ahead: z.number().int().optional().describe("Commits on the branch not on its upstream."),
    behind: z.number().int().optional().describe("Commits on the upstream not on the branch."),
  })
  .describe("Where HEAD is.");

export const statusEntry = z.strictObject({
  path: z.string().describe("Path from the project root."),
  from: z.string().optional().describe("Renamed or copied: the earlier path."),
  state: z
    .enum(["staged", "unstaged", "untracked", "conflict"])
    .describe("staged: index vs HEAD; unstaged: working tree vs index; conflict: unmerged."),
  change: z
    .string()
    .describe(
      "modified, added, deleted, renamed, copied, typechange, untracked; a conflict: both_modified, both_added, both_deleted, added_by_us, added_by_them, deleted_by_us, deleted_by_them.",
    ),
});

export type StatusEntry = z.infer<typeof statusEntry>;
export type Head = z.infer<typeof headOutput>;

const CHANGE: Record<string, string> = {
  M: "modified",
  A: "added",
  D: "deleted",
  R: "renamed",
  C: "copied",
  T: "typechange",
};
const CONFLICT: Record<string, string> = {
  UU: "both_modified",
  AA: "both_added",
  DD: "both_deleted",
  AU: "added_by_us",
  UA: "added_by_them",
  DU: "deleted_by_us",
  UD: "deleted_by_them",
};

/** The rows of one tracked entry ("1 XY ..." or "2 XY ..."): one per side that changed. */
function sidesOf(xy: string, path: string, from: string | undefined): StatusEntry[] {
  const rows: StatusEntry[] = [];
  const [x, y] = [xy[0]!, xy[1]!];
  if (x !== ".") rows.push({ path, ...(from !== undefined ? { from } : {}), state: "staged", change: CHANGE[x] ?? x });
  if (y !== ".") rows.push({ path, state: "unstaged", change: CHANGE[y] ?? y });
  return rows;
}

/** Fields before the path in porcelain v2: "1" has 8, "2" has 9, "u" has 10 (space separated). */
function pathAfter(record: string, fields: number): string {
  let at = 0;
  for (let i = 0; i < fields; i++) at = record.indexOf(" ", at) + 1;
  return record.slice(at);
}

export function parseStatus(text: string): { head: Head; entries: StatusEntry[] } {
  const head: Head = {};
  const entries: StatusEntry[] = [];
  const records = text.split("\0");
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    if (record.startsWith("# branch.oid ")) {
      const oid = record.slice(13);
      if (oid !== "(initial)") head.commit = oid;
    } else if (record.startsWith("# branch.head ")) {
      const name = record.slice(14);
      if (name !== "(detached)") head.branch = name;
    } else if (record.startsWith("# branch.upstream ")) {
      head.upstream = record.slice(18);
    } else if (record.startsWith("# branch.ab ")) {
      const match = /^\+(\d+) -(\d+)$/.exec(record.slice(12));
      if (match) [head.ahead, head.behind] = [Number(match[1]), Number(match[2])];
    } else if (record.startsWith("1 ")) {
      entries.push(...sidesOf(record.slice(2, 4), pathAfter(record, 8), undefined));
    } else if (record.startsWith("2 ")) {
      // The earlier path follows in the next NUL-separated record.
      entries.push(...sidesOf(record.slice(2, 4), pathAfter(record, 9), records[++i]));
    } else if (record.startsWith("u ")) {
      const xy = record.slice(2, 4);
      entries.push({ path: pathAfter(record, 10), state: "conflict", change: CONFLICT[xy] ?? xy });
    } else if (record.startsWith("? ")) {
      entries.push({ path: record.slice(2), state: "untracked", change: "untracked" });
    }
  }
  return { head, entries };
}

export async function readStatus(call: GitCall): Promise<{ head: Head; entries: StatusEntry[] }> {
  const output = await runGit(
    call,
    ["status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignore-submodules=all"],
    { worktree: true },
  );
  return parseStatus(output.stdout.toString("utf8"));
}
