// Request schemas of the control API. The web UI imports these types so client and server never drift.
import { z } from "zod";
import { MAX_SESSION_NAME } from "./session-name.js";

export const projectName = z
  .string()
  .trim()
  .min(1, "name is required")
  .max(64, "name is at most 64 characters")
  .regex(/^[A-Za-z0-9][A-Za-z0-9._ -]*$/, "name may use letters, digits, space, dot, dash and underscore");

/** `web` (webfetch, websearch) may be left out: off, as before the permission existed. */
export const permissionsSchema = z
  .object({ write: z.boolean(), terminal: z.boolean(), web: z.boolean().default(false) })
  .strict();

export const createProjectBody = z
  .object({
    name: projectName,
    root: z.string().min(1, "root is required"),
    permissions: permissionsSchema.default({ write: false, terminal: false, web: false }),
  })
  .strict();

export const patchProjectBody = z
  .object({
    name: projectName.optional(),
    root: z.string().min(1).optional(),
    permissions: z
      .object({ write: z.boolean().optional(), terminal: z.boolean().optional(), web: z.boolean().optional() })
      .strict()
      .optional(),
  })
  .strict();

/** A session's name: any printable text, trimmed; names need not be unique (the id always is). */
export const sessionName = z
  .string({ error: `name is required: text of 1 to ${MAX_SESSION_NAME} characters` })
  .trim()
  .min(1, "name is required")
  .max(MAX_SESSION_NAME, `name is at most ${MAX_SESSION_NAME} characters`)
  // Control characters would break the CLI's one-line table rows and the UI's headings.
  // eslint-disable-next-line no-control-regex
  .regex(/^[^\u0000-\u001f\u007f]*$/, "name may not contain control characters (newlines, tabs)");

/** A git ref name as the operator types it: one line, no leading dash (git would read an option). */
const refName = z
  .string()
  .trim()
  .min(1)
  .max(200, "at most 200 characters")
  .regex(/^[^-\s][^\s]*$/, "a branch name: no spaces, and not starting with a dash");

/** A session with its own git worktree (issue 31): from `base` (default: the project's current branch) on `branch`. */
export const worktreeRequest = z.object({ base: refName.optional(), branch: refName.optional() }).strict();

export const createSessionBody = z
  .object({
    projectId: z.string().min(1, "projectId is required"),
    name: sessionName.optional(),
    worktree: worktreeRequest.optional(),
  })
  .strict();

/** PATCH /api/sessions/:id: a rename; the session keeps its id, generation and URLs. */
export const patchSessionBody = z.object({ name: sessionName }).strict();

export const tunnelBody = z
  .object({
    publicOrigin: z.string().trim().min(1).nullable().optional(),
  })
  .strict();

export const loginBody = z.object({ token: z.string().min(1).max(512) }).strict();

export const activityQuery = z
  .object({
    sessionId: z.string().min(1).optional(),
    after: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(500).optional(),
  })
  .strict();

export const fsQuery = z.object({ path: z.string().min(1).optional() }).strict();
export const createFolderBody = z.object({ path: z.string().min(1), name: z.string().min(1).max(255) }).strict();

export type CreateProjectBody = z.infer<typeof createProjectBody>;
export type PatchProjectBody = z.infer<typeof patchProjectBody>;
export type CreateSessionBody = z.infer<typeof createSessionBody>;
export type PatchSessionBody = z.infer<typeof patchSessionBody>;
export type TunnelBody = z.infer<typeof tunnelBody>;

const callId = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, "a call id as /c lists it");

/** GET /api/sessions/:id/changes: no field, the change set; intent and/or path (or diff=1), an exact diff page. */
export const changesQuery = z
  .object({
    intent: callId.optional(),
    path: z.string().min(1).optional(),
    since: callId.optional(),
    diff: z.enum(["1", "true"]).optional(),
    offset: z.coerce.number().int().min(0).optional(),
    fingerprint: z
      .string()
      .regex(/^[0-9a-f]{32}$/)
      .optional(),
  })
  .strict();

/** POST /api/sessions/:id/revert: what to undo, as /n takes it; `run` makes a retried request answer the first. */
export const revertBody = z
  .object({
    intent: callId.optional(),
    path: z.string().min(1).optional(),
    all: z.boolean().optional(),
    since: callId.optional(),
    force: z.boolean().optional(),
    run: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/)
      .optional(),
  })
  .strict();
