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

/** Stable error codes. Adding one is an API change: document it in docs/PROTOCOL.md. */
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
  binaryFile: "binary_file",
  invalidRegex: "invalid_regex",
  invalidLineRange: "invalid_line_range",
  unsupportedLanguage: "unsupported_language",
  unknownPlugin: "unknown_plugin",
  unknownPluginTool: "unknown_plugin_tool",
  pluginArgumentsInvalid: "plugin_arguments_invalid",
  pluginAuthorityExceeded: "plugin_authority_exceeded",
  // read kernel (server/kernel/read*.ts, grep.ts, outline.ts)
  fileTooLarge: "file_too_large",
  grepEngineUnavailable: "grep_engine_unavailable",
  // range replay
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
  /** URLBRIDGE_SANDBOX=container: the Docker engine or the sandbox image is not usable (server/sandbox/container/). */
  sandboxUnavailable: "sandbox_unavailable",
  // mutation kernel: intent journal (server/mutation/journal*.ts)
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
  // mutation kernel: write, edit, apply_patch
  staleRead: "stale_read",
  unsupportedEncoding: "unsupported_encoding",
  writeFailed: "write_failed",
  editNoMatch: "edit_no_match",
  editAmbiguous: "edit_ambiguous",
  editNoChange: "edit_no_change",
  patchParseError: "patch_parse_error",
  patchHunkNotFound: "patch_hunk_not_found",
  patchTargetExists: "patch_target_exists",
  patchPathConflict: "patch_path_conflict",
  patchCommitFailed: "patch_commit_failed",
  // transport gym: request lines Node's HTTP parser refuses (server/gateway/client-error.ts)
  malformedRequestTarget: "malformed_request_target",
  // state store (server/store/): the journal cannot be written right now
  stateStoreUnavailable: "state_store_unavailable",
  // generic
  internalError: "internal_error",
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode] | (string & {});

export interface ToolFailure {
  ok: false;
  errorCode: ErrorCodeValue;
  errorDetail?: unknown;
  repairHint?: string;
  retryable: boolean;
  agentAction?: AgentAction;
  /** Exact URL to fetch as returned; never rebuilt by the agent. */
  repair?: string;
  [extra: string]: unknown;
}

export interface ToolErrorOptions {
  detail?: unknown;
  retryable?: boolean;
  agentAction?: AgentAction;
  repair?: string;
  /** Additional recovery fields (read, retry, repeat, poll, statusUrl...). */
  extra?: Record<string, unknown>;
}

export class ToolError extends Error {
  readonly code: ErrorCodeValue;
  readonly detail: unknown;
  readonly retryable: boolean;
  readonly agentAction: AgentAction | undefined;
  readonly repair: string | undefined;
  readonly extra: Record<string, unknown>;

  constructor(code: ErrorCodeValue, hint: string, options: ToolErrorOptions = {}) {
    super(hint);
    this.name = "ToolError";
    this.code = code;
    this.detail = options.detail;
    this.retryable = options.retryable ?? true;
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

export function isToolError(value: unknown): value is ToolError {
  return value instanceof ToolError;
}

/** Converts anything thrown inside a tool into a failure an agent can act on, without leaking stacks. */
export function toFailure(error: unknown): ToolFailure {
  if (isToolError(error)) return error.toFailure();
  return {
    ok: false,
    errorCode: ErrorCode.internalError,
    repairHint: "The bridge hit an unexpected error; the operator can see it in the server log. Retrying the same URL is safe.",
    retryable: true,
    agentAction: "wait_and_retry",
  };
}
