// The control API routes (docs/CONTROL_PLANE.md): JSON in, JSON out, errors as {error:{code,message}}.
import Router from "@koa/router";
import type { Config } from "../config.js";
import type { PluginHost } from "../plugins/host.js";
import type { Store } from "../store/index.js";
import { ControlError, ControlErrorCode } from "./errors.js";
import { createFolder, listFolders } from "./folder-browser.js";
import { readJsonBody } from "./json-body.js";
import type { PublicOrigin } from "../tunnel/public-origin.js";
import { normalizeOrigin, type OriginState } from "../tunnel/public-origin.js";
import { describeReachability, type Reachability } from "../tunnel/reachability.js";
import {
  canonicalRoot,
  MAX_ENABLED_SESSIONS,
  MAX_SESSION_DEFINITIONS,
  type Permissions,
  type Registry,
} from "./registry.js";
import { runningInAppliance, sessionMcpView } from "./session-mcp.js";
import {
  activityQuery,
  changesQuery,
  createProjectBody,
  createSessionBody,
  fsQuery,
  createFolderBody,
  patchProjectBody,
  patchSessionBody,
  revertBody,
  tunnelBody,
} from "./schemas.js";
import type { OperatorReview, ReviewBody } from "../edge/operator-review.js";
import { parseInput } from "./validate.js";
import { checkWritable, unwritableMessage } from "./writability.js";
import { addWorktreeRoutes } from "./worktrees/worktree-routes.js";
import type { Identity } from "../sandbox/identity.js";
import type { WorktreeSessions } from "./worktrees/worktree-sessions.js";

export interface ApiOptions {
  config: Config;
  store: Store;
  registry: Registry;
  publicOrigin: PublicOrigin;
  plugins: PluginHost;
  version: string;
  /** The bridge is the compose appliance (BridgeOptions.appliance); default: runningInAppliance(config.stateDir). */
  inAppliance?: boolean;
  /** The identity terminal commands in this root run as (undefined: the bridge's own); for the writability check. */
  terminalIdentity?: (root: string) => Identity | undefined;
  /** Who file tools decide as for a root (server/sandbox/agent-access.ts); undefined when it is the bridge itself. */
  agentIdentity?: (root: string) => Identity | undefined;
  /** The live pty=1 processes with their current screens, for GET /api/terminals (read-only). */
  interactiveProcesses?: () => OperatorPtyView[];
  /** A session's change set, diffs and revert (server/edge/operator-review.ts); absent: those routes answer not_found. */
  review?: OperatorReview;
  /** Worktree sessions (issue 31); absent: a request for a worktree answers invalid_request. */
  worktrees?: WorktreeSessions;
}

/** A review tool's failure as a control error: its own code where the catalog has it, else invalid_request. */
function reviewFailure(body: ReviewBody): ControlError {
  const code = String(body.errorCode);
  const known: Record<string, ControlErrorCode> = {
    change_not_found: ControlErrorCode.changeNotFound,
    revert_conflict: ControlErrorCode.revertConflict,
    review_detail_dropped: ControlErrorCode.reviewDetailDropped,
    state_store_unavailable: ControlErrorCode.stateStoreUnavailable,
  };
  return new ControlError(known[code] ?? ControlErrorCode.invalidRequest, String(body.repairHint ?? code));
}

/** GET /api/terminals: one live pty=1 process as the operator sees it; nothing here can type into it. */
export interface OperatorPtyView {
  pid: number;
  sessionId: string;
  projectId: string;
  command: string;
  startedAt: string;
  rows: number;
  cols: number;
  cursor: { row: number; col: number };
  screen: string;
}

/** GET /api/limits: the session ceilings, how much of each is used, and the error code past it. */
export interface SessionLimits {
  enabledSessions: { used: number; max: number; code: typeof ControlErrorCode.enabledSessionLimitReached };
  sessionDefinitions: { used: number; max: number; code: typeof ControlErrorCode.sessionDefinitionLimitReached };
}

/** GET /api/tunnel. */
export type TunnelView = OriginState & { reachability: Reachability };

export function createApiRouter(options: ApiOptions): Router {
  const { registry, store, publicOrigin } = options;
  const router = new Router({ prefix: "/api" });
  const inDocker = options.inAppliance ?? runningInAppliance(options.config.stateDir);
  const reachContext = { inAppliance: inDocker, dataPlaneOnHost: options.config.dataPlaneOnHost };
  /** GET/PUT /api/tunnel: the origin state plus who can reach Init URLs on it. */
  const tunnelView = (): TunnelView => {
    const state = publicOrigin.state();
    return { ...state, reachability: describeReachability(state, reachContext) };
  };

  /** Refuses write or terminal on a root that the identities which will write there cannot write (root_not_writable). */
  async function requireWritable(root: string, permissions: Pick<Permissions, "write" | "terminal">): Promise<void> {
    if (!permissions.write && !permissions.terminal) return;
    const canonical = canonicalRoot(root);
    const result = await checkWritable(canonical, {
      write: permissions.write,
      agentIdentity: options.agentIdentity?.(canonical),
      terminal: permissions.terminal,
      terminalIdentity: options.terminalIdentity?.(canonical),
    });
    if (!result.ok)
      throw new ControlError(ControlErrorCode.rootNotWritable, unwritableMessage(canonical, result, inDocker));
  }

  router.get("/projects", (ctx) => {
    ctx.body = registry.listProjects();
  });
  router.post("/projects", async (ctx) => {
    const body = parseInput(createProjectBody, await readJsonBody(ctx));
    await requireWritable(body.root, body.permissions);
    ctx.status = 201;
    ctx.body = registry.createProject(body);
  });
  router.get("/projects/:id", (ctx) => {
    ctx.body = registry.getProject(ctx.params.id!);
  });
  router.patch("/projects/:id", async (ctx) => {
    const body = parseInput(patchProjectBody, await readJsonBody(ctx));
    // Checked when the patch touches what decides it (root or permissions), not on a rename.
    if (body.root !== undefined || body.permissions !== undefined) {
      const current = registry.getProject(ctx.params.id!);
      if (
        body.root !== undefined &&
        canonicalRoot(body.root) !== current.root &&
        options.worktrees?.inProject(current.id)
      )
        throw new ControlError(
          ControlErrorCode.worktreesExist,
          `Project "${current.name}" has worktree sessions, whose worktrees belong to its current repository; delete them before moving its root.`,
        );
      await requireWritable(body.root ?? current.root, {
        write: body.permissions?.write ?? current.permissions.write,
        terminal: body.permissions?.terminal ?? current.permissions.terminal,
      });
    }
    const { project, rotatedSessions } = registry.updateProject(ctx.params.id!, body);
    ctx.body = { ...project, rotatedSessions };
  });
  router.delete("/projects/:id", async (ctx) => {
    registry.getProject(ctx.params.id!);
    // Its worktree sessions' folders and branches go first: their rows hold the sessions until then.
    await options.worktrees?.removeProject(ctx.params.id!);
    registry.deleteProject(ctx.params.id!);
    ctx.status = 204;
  });
  router.get("/projects/:id/repository", async (ctx) => {
    registry.getProject(ctx.params.id!);
    ctx.body = (await options.worktrees?.repository(ctx.params.id!)) ?? { repository: false, branch: null };
  });
  router.post("/projects/:id/worktrees/prune", async (ctx) => {
    registry.getProject(ctx.params.id!);
    if (!options.worktrees) throw new ControlError(ControlErrorCode.notFound, "This bridge has no worktree sessions.");
    ctx.body = await options.worktrees.prune(ctx.params.id!);
  });

  router.get("/sessions", (ctx) => {
    ctx.body = registry.listSessions();
  });
  router.post("/sessions", async (ctx) => {
    const body = parseInput(createSessionBody, await readJsonBody(ctx));
    if (body.worktree && !options.worktrees)
      throw new ControlError(ControlErrorCode.invalidRequest, "This bridge cannot make worktree sessions.");
    const created =
      body.worktree && options.worktrees
        ? await options.worktrees.create({ projectId: body.projectId, name: body.name, worktree: body.worktree })
        : registry.createSession(body);
    ctx.status = 201;
    ctx.body = created;
  });
  router.get("/sessions/:id", (ctx) => {
    ctx.body = registry.getSession(ctx.params.id!);
  });
  router.patch("/sessions/:id", async (ctx) => {
    const body = parseInput(patchSessionBody, await readJsonBody(ctx));
    ctx.body = registry.renameSession(ctx.params.id!, body.name);
  });
  addWorktreeRoutes(router, { store, registry, worktrees: options.worktrees, ownerOf: options.agentIdentity });
  router.get("/sessions/:id/mcp", (ctx) => {
    // The relay reaches the control plane where this request did (the socket's own address and port).
    const { localAddress, localPort } = ctx.req.socket;
    const host =
      !localAddress || localAddress === "0.0.0.0" || localAddress === "::"
        ? "127.0.0.1"
        : localAddress.replace(/^::ffff:/, "");
    const controlUrl = `http://${host.includes(":") ? `[${host}]` : host}:${localPort}`;
    ctx.body = sessionMcpView(store, publicOrigin, ctx.params.id!, {
      inDocker,
      composeProject: options.config.composeProject,
      stateDir: options.config.stateDir,
      controlUrl,
    });
  });
  /** Runs a review call for session :id; a failure answers its control error (with the conflicts of a revert). */
  const review = async (
    ctx: { params: Record<string, string | undefined>; status: number; body: unknown },
    call: (r: OperatorReview, id: string) => Promise<ReviewBody | undefined>,
  ) => {
    registry.getSession(ctx.params.id!);
    const body = options.review ? await call(options.review, ctx.params.id!) : undefined;
    if (!body) throw new ControlError(ControlErrorCode.notFound, "This bridge keeps no change sets.");
    if (body.ok) {
      ctx.body = body;
      return;
    }
    const error = reviewFailure(body);
    ctx.status = error.status;
    const conflicts = (body.errorDetail as { conflicts?: unknown } | undefined)?.conflicts;
    ctx.body = { error: { code: error.code, message: error.message }, ...(conflicts ? { conflicts } : {}) };
  };
  router.get("/sessions/:id/changes", (ctx) => {
    const q = parseInput(changesQuery, ctx.query);
    const { diff, ...rest } = q;
    return review(ctx, (r, id) => r.changes(id, { ...rest, ...(diff ? { diff: true } : {}) }));
  });
  router.post("/sessions/:id/revert", async (ctx) => {
    const { run, ...body } = parseInput(revertBody, await readJsonBody(ctx));
    return review(ctx, (r, id) => r.revert(id, body, run));
  });
  router.post("/sessions/:id/:action", (ctx) => {
    const id = ctx.params.id!;
    switch (ctx.params.action) {
      case "rotate":
        ctx.body = registry.rotateSession(id);
        return;
      case "enable":
        ctx.body = registry.enableSession(id);
        return;
      case "disable":
        ctx.body = registry.disableSession(id);
        return;
      default:
        throw new ControlError(
          ControlErrorCode.notFound,
          `Unknown session action "${ctx.params.action}"; use rotate, enable or disable.`,
        );
    }
  });
  router.delete("/sessions/:id", async (ctx) => {
    if (options.worktrees?.has(ctx.params.id!)) await options.worktrees.remove(ctx.params.id!);
    else registry.deleteSession(ctx.params.id!);
    ctx.status = 204;
  });

  router.get("/terminals", (ctx) => {
    const sessionId = typeof ctx.query.sessionId === "string" ? ctx.query.sessionId : undefined;
    const all = options.interactiveProcesses?.() ?? [];
    ctx.body = sessionId ? all.filter((p) => p.sessionId === sessionId) : all;
  });

  router.get("/limits", (ctx) => {
    const sessions = registry.listSessions();
    const body: SessionLimits = {
      enabledSessions: {
        used: sessions.filter((s) => s.enabled).length,
        max: MAX_ENABLED_SESSIONS,
        code: ControlErrorCode.enabledSessionLimitReached,
      },
      sessionDefinitions: {
        used: sessions.length,
        max: MAX_SESSION_DEFINITIONS,
        code: ControlErrorCode.sessionDefinitionLimitReached,
      },
    };
    ctx.body = body;
  });

  router.get("/activity", (ctx) => {
    const q = parseInput(activityQuery, ctx.query);
    ctx.body = store.activity.list({ sessionId: q.sessionId, afterId: q.after, limit: q.limit });
  });

  router.get("/tunnel", (ctx) => {
    ctx.body = tunnelView();
  });
  router.put("/tunnel", async (ctx) => {
    const body = parseInput(tunnelBody, await readJsonBody(ctx));
    if (body.publicOrigin !== undefined) {
      if (body.publicOrigin === null || body.publicOrigin === "") publicOrigin.save(undefined);
      else {
        try {
          publicOrigin.save(normalizeOrigin(body.publicOrigin));
        } catch (error) {
          throw new ControlError(ControlErrorCode.invalidOrigin, `publicOrigin: ${(error as Error).message}.`);
        }
      }
    }
    ctx.body = tunnelView();
  });

  router.get("/plugins", async (ctx) => {
    ctx.body = await options.plugins.summaries();
  });

  router.get("/fs", async (ctx) => {
    const q = parseInput(fsQuery, ctx.query);
    ctx.body = await listFolders(options.config.browseRoots, q.path);
  });
  router.post("/fs", async (ctx) => {
    const body = parseInput(createFolderBody, await readJsonBody(ctx));
    ctx.status = 201;
    ctx.body = await createFolder(options.config.browseRoots, body.path, body.name, {
      ownerFor: options.terminalIdentity,
    });
  });

  return router;
}
