// The control API's response and request types in one place, for the web UI and the CLI (type-only).
export type { OperatorPtyView, SessionLimits, TunnelView } from "./api.js";
export type { Reach, Reachability } from "../tunnel/reachability.js";
export type { LoginInfo, WhoAmI } from "./auth-routes.js";
export type { FolderListing } from "./folder-browser.js";
export type { OriginSource, OriginState, TunnelStatus } from "../tunnel/public-origin.js";
export type { Permissions, SessionView } from "./registry.js";
export type { SessionMcpView } from "./session-mcp.js";
export type { ProjectRepository, WorktreeLimits } from "./worktrees/worktree-sessions.js";
export type { WorktreeView } from "./worktrees/worktree-view.js";
export type { McpSnippet } from "./mcp-snippets.js";
export type {
  CreateProjectBody,
  CreateSessionBody,
  PatchProjectBody,
  PatchSessionBody,
  TunnelBody,
} from "./schemas.js";
export type { ActivityEntry } from "../store/activity.js";
export type { ActivityHealth } from "../store/activity.js";
export type { JournalHealth, StoreHealth } from "../store/health.js";
export type { ProjectRow as Project } from "../store/projects.js";
export type { PluginStatus, PluginSummary } from "../plugins/host.js";
/** GET /api/sessions/:id/changes and POST /api/sessions/:id/revert answer what /c and /n answer an agent. */
export type { ChangesOutput } from "../mutation/review/changes.js";
export type { RevertOutput } from "../mutation/review/revert.js";
export type { LaterChange, RevertConflict } from "../review/revert-plan.js";
import type { SandboxStatus } from "../sandbox/launcher.js";
import type { ContainerSandboxStatus } from "../sandbox/container/status.js";
import type { AgentLimitsStatus } from "../sandbox/agent-limits.js";
export type { SandboxStatus, ContainerSandboxStatus, AgentLimitsStatus };
/** What /api/health says the terminal sandbox enforces: the launcher's report, or the container mode's. */
export type SandboxReport = SandboxStatus | ContainerSandboxStatus;

/** GET /api/sessions/:id/worktree and its merge, keep and discard (server/control/worktree-routes.ts). */
export type { WorktreeErrorBody, WorktreeMergeView, WorktreeSessionView } from "./worktrees/worktree-routes.js";
export type { BranchReview, ChangedFile } from "./worktrees/branch-review.js";
export type { MergeMode } from "./worktrees/branch-merge.js";
/** Every control API error body; its code is one of the catalog in server/control/errors.ts. */
export type { ControlErrorBody as ApiErrorBody, ControlErrorCode } from "./errors.js";
/** A refused revert (409 revert_conflict) carries the files that changed after the change to undo. */
export type RevertConflictBody = import("./errors.js").ControlErrorBody & {
  conflicts?: import("../review/revert-plan.js").RevertConflict[];
};

/** PATCH /api/projects/:id answers the project plus the sessions it rotated. */
export type PatchProjectResult = import("../store/projects.js").ProjectRow & { rotatedSessions: string[] };
