// Projects page calls: projects, their sessions (to say which rotate), and the folder browser.
import { api, query } from "../../api/client";
import type {
  AgentLimitsStatus,
  CreateProjectBody,
  FolderListing,
  PatchProjectBody,
  PatchProjectResult,
  Project,
  SandboxReport,
  SessionView,
} from "../../api/types";

export const listProjects = () => api.get<Project[]>("/api/projects");
export const listSessions = () => api.get<SessionView[]>("/api/sessions");
export const createProject = (body: CreateProjectBody) => api.post<Project>("/api/projects", body);
export const patchProject = (id: string, body: PatchProjectBody) =>
  api.patch<PatchProjectResult>(`/api/projects/${encodeURIComponent(id)}`, body);
export const deleteProject = (id: string) => api.del(`/api/projects/${encodeURIComponent(id)}`);
export const listFolders = (path?: string) => api.get<FolderListing>(`/api/fs${query({ path })}`);
/** "New folder": made inside `path` as the agents' identity; answers the parent's listing. */
export const createFolder = (path: string, name: string) =>
  api.post<FolderListing & { created: string }>("/api/fs", { path, name });
/** What the terminal sandbox enforces (public /api/health). */
export const getSandbox = async () => (await api.get<{ sandbox?: SandboxReport }>("/api/health")).sandbox;
/** What one session's agent may use: OOM order, memory and growth budgets, file size (public /api/health). */
export const getAgentLimits = async () =>
  (await api.get<{ agentLimits?: AgentLimitsStatus }>("/api/health")).agentLimits;
