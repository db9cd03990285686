// Control-plane errors: a stable code from one catalog, the HTTP status that code always answers, and a message
// meant for the operator. app.ts turns each into `{error: {code, message}}`; docs/CONTROL_PLANE.md lists the same.

/** Every control-plane error code. Adding one is an API change: give it a status below and a row in the docs. */
export const ControlErrorCode = {
  // request bodies and fields (json-body.ts, validate.ts)
  invalidRequest: "invalid_request",
  invalidJson: "invalid_json",
  bodyTooLarge: "body_too_large",
  unsupportedMediaType: "unsupported_media_type",
  // project roots (registry.ts) and the public origin (api.ts)
  rootNotAbsolute: "root_not_absolute",
  rootNotFound: "root_not_found",
  rootNotDirectory: "root_not_directory",
  rootNotWritable: "root_not_writable",
  invalidOrigin: "invalid_origin",
  // the folder browser (folder-browser.ts)
  invalidPath: "invalid_path",
  outsideBrowseRoots: "outside_browse_roots",
  notReadable: "not_readable",
  pathNotFound: "path_not_found",
  folderExists: "folder_exists",
  // who may call (operator-auth.ts, auth-routes.ts, auth-backoff.ts, host-guard.ts, same-origin.ts)
  unauthorized: "unauthorized",
  invalidToken: "invalid_token",
  hostNotAllowed: "host_not_allowed",
  crossOrigin: "cross_origin",
  authBackoff: "auth_backoff",
  // ids, names and limits (registry.ts, api.ts, app.ts)
  notFound: "not_found",
  projectNameTaken: "project_name_taken",
  enabledSessionLimitReached: "enabled_session_limit_reached",
  sessionDefinitionLimitReached: "session_definition_limit_reached",
  // review and undo (api.ts over server/edge/operator-review.ts)
  changeNotFound: "change_not_found",
  revertConflict: "revert_conflict",
  reviewDetailDropped: "review_detail_dropped",
  // worktree sessions (server/control/worktrees/, issue 31)
  notARepository: "not_a_repository",
  unknownBase: "unknown_base",
  branchExists: "branch_exists",
  worktreeFolderExists: "worktree_folder_exists",
  worktreeLimitReached: "worktree_limit_reached",
  worktreeGitFailed: "worktree_git_failed",
  worktreesExist: "worktrees_exist",
  // worktree review and merge (worktrees/worktree-routes.ts, branch-*.ts)
  notAWorktreeSession: "not_a_worktree_session",
  worktreeBranchMissing: "worktree_branch_missing",
  nothingToMerge: "nothing_to_merge",
  mergeConflict: "merge_conflict",
  baseWorktreeDirty: "base_worktree_dirty",
  baseInWorktree: "base_in_worktree",
  mergeDriverConfigured: "merge_driver_configured",
  baseMoved: "base_moved",
  diffChanged: "diff_changed",
  // the state store (app.ts): the database refused a write (disk full, a lock another process holds, I/O)
  stateStoreUnavailable: "state_store_unavailable",
  // generic
  internalError: "internal_error",
} as const;

export type ControlErrorCode = (typeof ControlErrorCode)[keyof typeof ControlErrorCode];

/** The HTTP status each code answers; every code has exactly one. */
export const CONTROL_ERROR_STATUS = {
  invalid_request: 400,
  invalid_json: 400,
  body_too_large: 413,
  unsupported_media_type: 415,
  root_not_absolute: 400,
  root_not_found: 400,
  root_not_directory: 400,
  root_not_writable: 409,
  invalid_origin: 400,
  invalid_path: 400,
  outside_browse_roots: 403,
  folder_exists: 409,
  not_readable: 403,
  path_not_found: 404,
  unauthorized: 401,
  invalid_token: 401,
  host_not_allowed: 403,
  cross_origin: 403,
  auth_backoff: 429,
  not_found: 404,
  project_name_taken: 409,
  enabled_session_limit_reached: 409,
  session_definition_limit_reached: 409,
  change_not_found: 404,
  revert_conflict: 409,
  review_detail_dropped: 410,
  not_a_repository: 409,
  unknown_base: 400,
  branch_exists: 409,
  worktree_folder_exists: 409,
  worktree_limit_reached: 409,
  worktree_git_failed: 502,
  worktrees_exist: 409,
  not_a_worktree_session: 404,
  worktree_branch_missing: 409,
  nothing_to_merge: 409,
  merge_conflict: 409,
  base_worktree_dirty: 409,
  base_in_worktree: 409,
  merge_driver_configured: 409,
  base_moved: 409,
  diff_changed: 409,
  state_store_unavailable: 503,
  internal_error: 500,
} as const satisfies Record<ControlErrorCode, number>;

/** Every control API error body. */
export interface ControlErrorBody {
  error: { code: ControlErrorCode; message: string };
}

export class ControlError extends Error {
  override name = "ControlError";
  readonly status: number;
  constructor(
    readonly code: ControlErrorCode,
    message: string,
  ) {
    super(message);
    this.status = CONTROL_ERROR_STATUS[code];
  }
}

/** The JSON an error answers with (key order is part of the wire: code, then message). */
export function controlErrorBody(code: ControlErrorCode, message: string): ControlErrorBody {
  return { error: { code, message } };
}

export const notFound = (what: string, id: string) =>
  new ControlError(ControlErrorCode.notFound, `No ${what} with id "${id}".`);

/** Messages more than one place answers with, so the same code always reads the same. */
export const controlMessage = {
  internalError: "Unexpected error; see the server log.",
  stateStoreUnavailable: (code: string) =>
    `The state database refused the write (${code}: its disk is full, another process holds its lock, or an I/O error), so nothing was changed. Free space or end the other process, then retry; /api/health shows when the store takes writes again.`,
  unauthorized: "Log in to the control UI, or send Authorization: Bearer <operator token>.",
  wrongBearer: "The bearer token is not the operator token; print it with `urlbridge token --show`.",
  enabledSessionLimit: (max: number) => `At most ${max} sessions may be enabled at once; disable one first.`,
  sessionDefinitionLimit: (max: number) => `At most ${max} sessions may exist; delete one first.`,
  projectNameTaken: (name: string) => `A project named "${name}" already exists.`,
} as const;
