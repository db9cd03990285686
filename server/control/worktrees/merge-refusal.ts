// A refused worktree review or merge that names paths: the conflicting ones, or the base working tree's uncommitted
// ones a merge would write. worktree-routes.ts answers it as {error, paths}.
import { ControlError, type ControlErrorCode } from "../errors.js";

/** Most paths a refusal lists; the message says how many there were. */
export const MAX_LISTED_PATHS = 200;

export class MergeRefusal extends ControlError {
  readonly paths: string[];
  constructor(code: ControlErrorCode, message: string, paths: string[]) {
    super(code, message);
    this.paths = paths.slice(0, MAX_LISTED_PATHS);
  }
}
