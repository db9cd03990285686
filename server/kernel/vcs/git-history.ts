// /v?op=log, op=show and op=refs: the commits reachable from a revision (optionally touching a path), one file as
// a revision holds it, and the repository's branches and tags. None of them reads the working tree.
import { z } from "zod";
import { decodeLossy } from "../../text/index.js";
import { runGit, unknownRevision, type GitCall } from "./git-command.js";
import { ErrorCode, ToolError } from "../../errors.js";

export const commitRow = z.strictObject({
  commit: z.string().describe("The full commit hash."),
  parents: z.array(z.string()).describe("Parent hashes (two or more for a merge)."),
  author: z.string(),
  email: z.string(),
  date: z.string().describe("Author date, ISO 8601."),
  subject: z.string().describe("First line of the message."),
});

export const refRow = z.strictObject({
  name: z.string().describe("Short name (main, v1.0, origin/main)."),
  kind: z.enum(["branch", "tag", "remote"]),
  commit: z.string().describe("The commit it points at (a tag's target commit)."),
  current: z.literal(true).optional().describe("Present on the checked-out branch."),
  upstream: z.string().optional().describe("A branch's upstream, when set."),
  subject: z.string().describe("Subject of its commit (or of an annotated tag's message)."),
});

export type CommitRow = z.infer<typeof commitRow>;
export type RefRow = z.infer<typeof refRow>;

const LOG_FIELDS = 6;
/** One log entry's fields (LOG_FIELDS of them) or one ref line's (REF_FORMAT's six), split on NUL. */
type SixFields = [string, string, string, string, string, string];
const NO_COMMITS = /does not have any commits yet|ambiguous argument 'HEAD'/;

/**
 * What `rev` resolves to, as rev-parse prints it (one hash, or several for a range such as main..topic): the
 * identity of the log it starts. Undefined when rev is HEAD of a repository without commits.
 */
async function resolveRevision(call: GitCall, rev: string | undefined): Promise<string | undefined> {
  const output = await runGit(call, ["rev-parse", "--end-of-options", rev ?? "HEAD"], {
    subject: { rev: rev ?? "HEAD" },
    accept: (o) => rev === undefined && o.code !== 0 && NO_COMMITS.test(o.stderr),
  });
  return output.code === 0 ? output.stdout.toString("utf8").trim() : undefined;
}

/** Up to `limit` commits after skipping `offset`, plus whether more follow; `resolved` identifies the log. */
export async function readLog(
  call: GitCall,
  rev: string | undefined,
  relative: string | undefined,
  offset: number,
  limit: number,
): Promise<{ resolved: string | undefined; commits: CommitRow[]; more: boolean }> {
  const resolved = await resolveRevision(call, rev);
  if (resolved === undefined) return { resolved, commits: [], more: false };
  const output = await runGit(
    call,
    [
      "log",
      "--no-color",
      "-z",
      "--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%s",
      `--skip=${offset}`,
      `--max-count=${limit + 1}`,
      "--end-of-options",
      rev ?? "HEAD",
      "--",
      ...(relative !== undefined ? [relative] : []),
    ],
    { subject: { rev: rev ?? "HEAD" } },
  );
  const fields = output.stdout.toString("utf8").split("\0");
  const commits: CommitRow[] = [];
  for (let i = 0; i + LOG_FIELDS <= fields.length; i += LOG_FIELDS) {
    const [commit, parents, author, email, date, subject] = fields.slice(i, i + LOG_FIELDS) as SixFields;
    commits.push({ commit, parents: parents === "" ? [] : parents.split(" "), author, email, date, subject });
  }
  return { resolved, commits: commits.slice(0, limit), more: commits.length > limit };
}

export interface ShownFile {
  blob: string;
  size: number;
  /** Undefined for a binary file. */
  text: string | undefined;
}

/** The file at `relative` as revision `rev` holds it. */
export async function readFileAt(call: GitCall, rev: string, relative: string, display: string): Promise<ShownFile> {
  const listed = await runGit(call, ["ls-tree", "-z", "--long", "--end-of-options", rev, "--", relative], {
    subject: { rev },
  });
  const entry = listed.stdout.toString("utf8").split("\0")[0] ?? "";
  const match = /^(\d+) (\w+) ([0-9a-f]+) +(-|\d+)\t(.*)$/s.exec(entry);
  if (!match || match[5] !== relative) {
    throw new ToolError(
      ErrorCode.pathNotFound,
      `${display} is not in ${rev}; /v?op=log&path=<p> lists the commits that touched a path, /v?op=diff shows what changed.`,
      { detail: { path: display, rev } },
    );
  }
  const [, , type, blob, size] = match as unknown as [string, string, string, string, string];
  if (type !== "blob") {
    throw new ToolError(
      ErrorCode.notAFile,
      `${display} is a ${type === "tree" ? "folder" : type} in ${rev}, not a file; /v?op=show takes a file's path.`,
      { detail: { path: display, rev, type } },
    );
  }
  const content = await runGit(call, ["cat-file", "blob", blob], { subject: { rev } });
  const decoded = decodeLossy(content.stdout);
  return {
    blob,
    size: Number(size),
    text: decoded.kind === "binary" ? undefined : decoded.utf8.toString("utf8"),
  };
}

/** Confirms `rev` names a commit (show's revision), so a typo is unknown_revision rather than a missing path. */
export async function verifyCommit(call: GitCall, rev: string): Promise<string> {
  const output = await runGit(call, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`], {
    accept: (o) => o.code === 1,
  });
  if (output.code !== 0) throw unknownRevision(rev);
  return output.stdout.toString("utf8").trim();
}

const REF_FORMAT = "%(refname)%00%(objectname)%00%(*objectname)%00%(HEAD)%00%(upstream:short)%00%(contents:subject)";

export async function readRefs(call: GitCall): Promise<RefRow[]> {
  const output = await runGit(call, [
    "for-each-ref",
    `--format=${REF_FORMAT}`,
    "refs/heads",
    "refs/tags",
    "refs/remotes",
  ]);
  const rows: RefRow[] = [];
  for (const line of output.stdout.toString("utf8").split("\n")) {
    if (line === "") continue;
    const [refname, object, peeled, head, upstream, subject] = line.split("\0") as SixFields;
    const kind = refname.startsWith("refs/heads/") ? "branch" : refname.startsWith("refs/tags/") ? "tag" : "remote";
    const name = refname.replace(/^refs\/(heads|tags|remotes)\//, "");
    if (kind === "remote" && name.endsWith("/HEAD")) continue;
    rows.push({
      name,
      kind,
      commit: peeled || object,
      ...(head === "*" ? { current: true as const } : {}),
      ...(upstream ? { upstream } : {}),
      subject: subject ?? "",
    });
  }
  return rows;
}
