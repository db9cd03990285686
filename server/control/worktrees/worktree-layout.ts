// Where a session's worktree goes and what its branch is called (issue 31, docs/CONTROL_PLANE.md "Worktree sessions").
//
// Default: a folder beside the project root, `<parent>/<root's name>.worktrees/<leaf>` (the layout `git worktree`
// users keep by hand). Beside, not inside: the main working tree stays untouched (no untracked folder in its
// `git status`, nothing new for the project's other sessions to see or search), and another project's sandbox never
// holds it. In the appliance the projects are bind-mounted under /projects, so /projects/<name>.worktrees lies on the
// same host mount and survives a container restart (the container's own layer does not). URLBRIDGE_WORKTREE_DIR
// puts them in `<dir>/<project id>/<leaf>` instead, for a project whose parent folder is not its owner's to write
// or a root that is the mount itself (/projects: its parent is the container's layer).
import path from "node:path";

/** A branch's last segment, or a session name, as a folder and ref component: a-z, 0-9, dot, dash, underscore. */
export function slugOf(name: string): string {
  const slug = name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "")
    .replace(/\.{2,}/g, ".")
    .replace(/\.lock$/, "-lock")
    .slice(0, 64)
    .replace(/[-.]+$/g, "");
  return slug === "" ? "session" : slug;
}

/** The branch a session's worktree gets when the operator names none: urlbridge/<session name as a slug>. */
export function defaultBranch(sessionName: string): string {
  return `urlbridge/${slugOf(sessionName)}`;
}

/** The worktree folder for `branch` of the project at `root` (canonical), under `configuredDir` when it is set. */
export function worktreePath(input: {
  root: string;
  projectId: string;
  branch: string;
  configuredDir?: string;
}): string {
  const leaf = slugOf(input.branch.split("/").pop() ?? input.branch);
  if (input.configuredDir) return path.join(input.configuredDir, input.projectId, leaf);
  return path.join(path.dirname(input.root), `${path.basename(input.root)}.worktrees`, leaf);
}
