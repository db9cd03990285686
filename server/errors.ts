// Every agent-facing failure as a typed value with a stable code.
// Tools throw ToolError; the gateway turns it into HTTP 200 {ok:false,...} because URL readers hide error bodies.

export type AgentAction =
  | "correct_request"
  | "fetch_repair"
  | "stage_content"
  | "reread_then_retry"
  | "run_foreground"
  | "poll"
  | "wait_and_retry"
  | "enable_in_control_plane"
  | "stop";

/** Stable error codes. Adding one is an API change: give it an ERROR_CATALOG entry and a row in docs/PROTOCOL.md §3. */
export const ErrorCode = {
  // transport and parameters
  requestTargetTooLong: "request_target_too_long",
  rawTooLong: "raw_too_long",
  misplacedParameter: "misplaced_parameter",
  unknownParameter: "unknown_parameter",
  conflictingParameters: "conflicting_parameters",
  invalidParameter: "invalid_parameter",
  missingParameter: "missing_parameter",
  unexpectedRaw: "unexpected_raw",
  unknownRoute: "unknown_route",
  wrongCapabilityBase: "wrong_capability_base",
  toolNotEnabled: "tool_not_enabled",
  /** The data plane's opaque 404 (server/edge/http-answer.ts OPAQUE_NOT_FOUND): its body is only ok and errorCode. */
  notFound: "not_found",
  // sandbox
  pathOutsideRoot: "path_outside_root",
  symlinkEscape: "symlink_escape",
  pathNotFound: "path_not_found",
  notAFile: "not_a_file",
  notADirectory: "not_a_directory",
  invalidPath: "invalid_path",
  projectRootMissing: "project_root_missing",
  projectRootChanged: "project_root_changed",
  /** Retryable: a folder or link on the path was replaced while the call used it (server/sandbox/fd-walk.ts). */
  pathChanged: "path_changed",
  // read kernel
  tooManyPaths: "too_many_paths",
  searchBusy: "search_busy",
  binaryFile: "binary_file",
  invalidRegex: "invalid_regex",
  invalidLineRange: "invalid_line_range",
  unsupportedLanguage: "unsupported_language",
  outlineFailed: "outline_failed",
  unknownPlugin: "unknown_plugin",
  unknownPluginTool: "unknown_plugin_tool",
  pluginArgumentsInvalid: "plugin_arguments_invalid",
  pluginAuthorityExceeded: "plugin_authority_exceeded",
  // read kernel (server/kernel/read/, server/kernel/search/grep-search.ts)
  fileTooLarge: "file_too_large",
  grepEngineUnavailable: "grep_engine_unavailable",
  // range replay (server/url-grammar/range-replay.ts)
  snapshotNotFound: "snapshot_not_found",
  rangeOutOfBounds: "range_out_of_bounds",
  // terminal (/x)
  commandRefused: "command_refused",
  commandTimedOut: "command_timed_out",
  terminalBusy: "terminal_busy",
  backgroundStartFailed: "background_start_failed",
  backgroundLimitReached: "background_limit_reached",
  /** /x?stop=<pid>: no background process of this session has that pid (it ended, or is another session's). */
  processNotFound: "process_not_found",
  /** The session's terminal processes plus the scratch tmpfs passed URLBRIDGE_AGENT_MEMORY_MB; they were ended. */
  memoryBudgetExceeded: "memory_budget_exceeded",
  /** The session added more to its project than URLBRIDGE_SESSION_GROWTH_MB allows. */
  growthBudgetExceeded: "growth_budget_exceeded",
  ptyLimitReached: "pty_limit_reached",
  processEnded: "process_ended",
  /** URLBRIDGE_SANDBOX=container: the Docker engine or the sandbox image is not usable (server/sandbox/container/). */
  sandboxUnavailable: "sandbox_unavailable",
  // mutation kernel: intent journal (server/mutation/journal/)
  intentNotFound: "intent_not_found",
  callIdConflict: "call_id_conflict",
  interrupted: "interrupted",
  interruptedRolledBack: "interrupted_rolled_back",
  intentResultExpired: "intent_result_expired",
  // mutation kernel: staging (server/mutation/staging/staging.ts)
  stagedChunkConflict: "staged_chunk_conflict",
  stagedCountMismatch: "staged_count_mismatch",
  stagedIndexOutOfRange: "staged_index_out_of_range",
  stagedChunkTooLarge: "staged_chunk_too_large",
  stagedBlobTooLarge: "staged_blob_too_large",
  stagedBlobNotFound: "staged_blob_not_found",
  stagedBlobIncomplete: "staged_blob_incomplete",
  // mutation kernel: write, edit, apply_patch (server/mutation/files/)
  staleRead: "stale_read",
  unsupportedEncoding: "unsupported_encoding",
  writeFailed: "write_failed",
  /** The agent's identity may not change that file or folder (its terminal would be refused too): agent-access.ts. */
  permissionDenied: "permission_denied",
  editNoMatch: "edit_no_match",
  editAmbiguous: "edit_ambiguous",
  editNoChange: "edit_no_change",
  /** A guarded /e retry (atLine, blockHash) found its lines moved or changed since the answer that offered it. */
  editTargetChanged: "edit_target_changed",
  patchParseError: "patch_parse_error",
  patchHunkNotFound: "patch_hunk_not_found",
  patchTargetExists: "patch_target_exists",
  patchPathConflict: "patch_path_conflict",
  patchCommitFailed: "patch_commit_failed",
  patchTooLarge: "patch_too_large",
  // review and undo (server/review/, server/mutation/review/)
  changeNotFound: "change_not_found",
  revertConflict: "revert_conflict",
  reviewDetailDropped: "review_detail_dropped",
  // transport gym: request lines Node's HTTP parser refuses (server/gateway/client-error.ts)
  malformedRequestTarget: "malformed_request_target",
  // state store (server/store/): the journal cannot be written right now
  stateStoreUnavailable: "state_store_unavailable",
  // web tools (server/kernel/web/): webfetch's guard and fetch, websearch's providers
  webUrlInvalid: "web_url_invalid",
  webAddressRefused: "web_address_refused",
  webDnsFailed: "web_dns_failed",
  webFetchFailed: "web_fetch_failed",
  webTimeout: "web_timeout",
  webTooManyRedirects: "web_too_many_redirects",
  webHttpStatus: "web_http_status",
  webBinaryContent: "web_binary_content",
  webSearchNotConfigured: "web_search_not_configured",
  webSearchFailed: "web_search_failed",
  // the bundled OpenCode Control plugin (plugins/opencode-control/)
  opencodeUnavailable: "opencode_unavailable",
  opencodeNeedsAuth: "opencode_needs_auth",
  opencodeInstanceChanged: "opencode_instance_changed",
  opencodeNotFound: "opencode_not_found",
  opencodeBusy: "opencode_busy",
  opencodeWorkerLimit: "opencode_worker_limit",
  opencodeRefused: "opencode_refused",
  opencodeFailed: "opencode_failed",
  pageChanged: "page_changed",
  // version control (server/kernel/vcs/)
  notARepository: "not_a_repository",
  unknownRevision: "unknown_revision",
  gitOutputTooLarge: "git_output_too_large",
  gitFailed: "git_failed",
  // agent commits in a worktree session (server/mutation/vcs/commit.ts)
  notAWorktreeSession: "not_a_worktree_session",
  notOnSessionBranch: "not_on_session_branch",
  nothingToCommit: "nothing_to_commit",
  nestedRepository: "nested_repository",
  // generic
  internalError: "internal_error",
} as const;

/** A stable error code: a closed union, so tsc refuses a code nobody catalogued. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface ErrorCodeInfo {
  /**
   * true: the cause is transient or cleared by a step that is not a change to the request (waiting, reading the
   * file first, staging the missing chunks), so the same request may succeed later unchanged; for a recorded
   * mutation, through its `retry` URL. false: the request must change, or only the operator can fix the cause.
   */
  retryable: boolean;
  /** Set only where one code is honestly both: when a call site states the other value. Absent: never. */
  varies?: string;
}

/**
 * `retryable` for every code; docs/PROTOCOL.md §3 "Every error code" lists the same (test/unit/errors.test.ts).
 * A ToolError takes its retryable from here; a call site may state the other value only for a code with `varies`.
 */
export const ERROR_CATALOG = {
  request_target_too_long: { retryable: false },
  raw_too_long: { retryable: false },
  misplaced_parameter: { retryable: false },
  unknown_parameter: { retryable: false },
  conflicting_parameters: { retryable: false },
  invalid_parameter: { retryable: false },
  missing_parameter: { retryable: false },
  unexpected_raw: { retryable: false },
  unknown_route: { retryable: false },
  wrong_capability_base: { retryable: false },
  tool_not_enabled: { retryable: false },
  not_found: { retryable: false },
  path_outside_root: { retryable: false },
  symlink_escape: { retryable: false },
  path_not_found: { retryable: false },
  not_a_file: { retryable: false },
  not_a_directory: { retryable: false },
  invalid_path: { retryable: false },
  project_root_missing: { retryable: false },
  project_root_changed: { retryable: false },
  path_changed: { retryable: true },
  too_many_paths: { retryable: false },
  search_busy: { retryable: true },
  binary_file: { retryable: false },
  invalid_regex: { retryable: false },
  invalid_line_range: { retryable: false },
  unsupported_language: { retryable: false },
  outline_failed: { retryable: false },
  unknown_plugin: { retryable: false },
  unknown_plugin_tool: { retryable: false },
  plugin_arguments_invalid: { retryable: false },
  plugin_authority_exceeded: { retryable: false },
  file_too_large: { retryable: false },
  grep_engine_unavailable: { retryable: false },
  snapshot_not_found: { retryable: false },
  range_out_of_bounds: { retryable: false },
  command_refused: { retryable: false },
  command_timed_out: { retryable: false },
  terminal_busy: { retryable: true },
  background_start_failed: { retryable: false },
  background_limit_reached: { retryable: true },
  process_not_found: { retryable: false },
  memory_budget_exceeded: { retryable: false },
  growth_budget_exceeded: { retryable: false },
  pty_limit_reached: { retryable: true },
  process_ended: { retryable: false },
  sandbox_unavailable: {
    retryable: false,
    varies:
      "true when the Docker engine is unreachable or could not prepare the container (errorDetail.reason engine_unreachable, engine_error)",
  },
  intent_not_found: { retryable: false },
  call_id_conflict: { retryable: false },
  interrupted: {
    retryable: true,
    varies:
      "false when the command's session or project ended under it (errorDetail.reason scope_ended): only the operator can bring that back",
  },
  interrupted_rolled_back: { retryable: true },
  intent_result_expired: { retryable: false },
  staged_chunk_conflict: { retryable: false },
  staged_count_mismatch: { retryable: false },
  staged_index_out_of_range: { retryable: false },
  staged_chunk_too_large: { retryable: false },
  staged_blob_too_large: { retryable: false },
  staged_blob_not_found: { retryable: true },
  staged_blob_incomplete: { retryable: true },
  stale_read: { retryable: true },
  unsupported_encoding: { retryable: false },
  write_failed: { retryable: true },
  permission_denied: { retryable: false },
  edit_no_match: { retryable: false },
  edit_ambiguous: { retryable: false },
  edit_no_change: { retryable: false },
  edit_target_changed: { retryable: false },
  patch_parse_error: { retryable: false },
  patch_hunk_not_found: { retryable: false },
  patch_target_exists: { retryable: false },
  patch_path_conflict: { retryable: false },
  patch_commit_failed: {
    retryable: true,
    varies:
      "false when restoring the earlier files failed too (errorDetail.rolledBack false): the tree may be partly patched",
  },
  patch_too_large: { retryable: false },
  change_not_found: { retryable: false },
  revert_conflict: { retryable: false },
  review_detail_dropped: { retryable: false },
  // The same bytes are re-encoded and served when the request head arrives in one packet (gateway/client-error.ts).
  malformed_request_target: { retryable: true },
  state_store_unavailable: { retryable: true },
  web_url_invalid: { retryable: false },
  web_address_refused: { retryable: false },
  web_dns_failed: { retryable: false, varies: "true when the resolver failed for now (errorDetail.code EAI_AGAIN)" },
  web_fetch_failed: {
    retryable: true,
    varies: "false when the site's TLS certificate is not trusted or the answer is malformed (errorDetail.code)",
  },
  web_timeout: { retryable: true },
  web_too_many_redirects: { retryable: false },
  web_http_status: { retryable: false, varies: "true for 408, 425, 429 and 5xx answers (errorDetail.status)" },
  web_binary_content: { retryable: false },
  web_search_not_configured: { retryable: false },
  web_search_failed: {
    retryable: true,
    varies: "false when the provider refused the key or the request (errorDetail.status 400, 401, 403, 422)",
  },
  opencode_unavailable: { retryable: true },
  opencode_needs_auth: { retryable: false },
  opencode_instance_changed: { retryable: false },
  opencode_not_found: { retryable: false },
  opencode_busy: { retryable: true },
  opencode_worker_limit: { retryable: true },
  opencode_refused: { retryable: false },
  opencode_failed: { retryable: false },
  page_changed: { retryable: false },
  not_a_repository: { retryable: false },
  unknown_revision: { retryable: false },
  git_output_too_large: { retryable: false },
  git_failed: { retryable: false, varies: "true when git ran out of time (errorDetail.reason timeout)" },
  not_a_worktree_session: { retryable: false },
  not_on_session_branch: { retryable: false },
  nothing_to_commit: { retryable: false },
  nested_repository: { retryable: false },
  internal_error: {
    retryable: true,
    varies:
      "false when the bridge knows the cause needs the operator (no /proc, the shell cannot be spawned) or a tool was called outside its runner",
  },
} as const satisfies Record<ErrorCode, ErrorCodeInfo>;

type Catalog = typeof ERROR_CATALOG;
/** What a call site may state: either value for a code that varies, else only the catalog's own (a restatement). */
export type RetryableOption<C extends ErrorCode> = C extends unknown
  ? Catalog[C] extends { varies: string }
    ? boolean
    : Catalog[C]["retryable"]
  : never;

export function retryableOf(code: ErrorCode): boolean {
  return ERROR_CATALOG[code].retryable;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CATALOG, value);
}

export interface ToolFailure {
  ok: false;
  errorCode: ErrorCode;
  errorDetail?: unknown;
  repairHint?: string;
  retryable: boolean;
  agentAction?: AgentAction;
  /** Exact URL to fetch as returned; never rebuilt by the agent. */
  repair?: string;
  [extra: string]: unknown;
}

export interface ToolErrorOptions<C extends ErrorCode = ErrorCode> {
  detail?: unknown;
  /** Defaults to the catalog's value; only a code with `varies` may state the other one. */
  retryable?: RetryableOption<C>;
  agentAction?: AgentAction;
  repair?: string;
  /** Additional recovery fields (read, retry, repeat, poll, statusUrl...). */
  extra?: Record<string, unknown>;
}

class ToolErrorClass extends Error {
  readonly code: ErrorCode;
  readonly detail: unknown;
  readonly retryable: boolean;
  readonly agentAction: AgentAction | undefined;
  readonly repair: string | undefined;
  readonly extra: Record<string, unknown>;

  constructor(code: ErrorCode, hint: string, options: ToolErrorOptions = {}) {
    super(hint);
    this.name = "ToolError";
    this.code = code;
    this.detail = options.detail;
    const entry: ErrorCodeInfo | undefined = ERROR_CATALOG[code];
    // Only plain JavaScript can get here with an uncatalogued code; the caller then answers internal_error.
    if (!entry)
      throw new TypeError(
        `ToolError: "${String(code)}" is not an error code; add it to ErrorCode and ERROR_CATALOG in server/errors.ts.`,
      );
    // A code that does not vary answers its catalog value even when a re-thrown error's value came along.
    this.retryable = entry.varies === undefined ? entry.retryable : (options.retryable ?? entry.retryable);
    this.agentAction = options.agentAction ?? (options.repair ? "fetch_repair" : "correct_request");
    this.repair = options.repair;
    this.extra = options.extra ?? {};
  }

  toFailure(): ToolFailure {
    const failure: ToolFailure = { ok: false, errorCode: this.code, retryable: this.retryable };
    if (this.detail !== undefined) failure.errorDetail = this.detail;
    failure.repairHint = this.message;
    if (this.agentAction) failure.agentAction = this.agentAction;
    if (this.repair) failure.repair = this.repair;
    return { ...failure, ...this.extra };
  }
}

/**
 * The class under a constructor type generic in the code, so `retryable:` is checked against that code's catalog
 * entry (a generic class would make `instanceof` narrow to ToolError<any> and lose the code's type).
 */
export const ToolError: new <C extends ErrorCode>(
  code: C,
  hint: string,
  options?: ToolErrorOptions<NoInfer<C>>,
) => ToolErrorClass = ToolErrorClass;
export type ToolError = ToolErrorClass;

export function isToolError(value: unknown): value is ToolError {
  return value instanceof ToolErrorClass;
}

/** Converts anything thrown inside a tool into a failure an agent can act on, without leaking stacks. */
export function toFailure(error: unknown): ToolFailure {
  if (isToolError(error)) return error.toFailure();
  return {
    ok: false,
    errorCode: ErrorCode.internalError,
    repairHint:
      "The bridge hit an unexpected error; the operator can see it in the server log. Retrying the same URL is safe.",
    retryable: retryableOf(ErrorCode.internalError),
    agentAction: "wait_and_retry",
  };
}
