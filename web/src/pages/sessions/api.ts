// Sessions page calls: sessions, their projects, limits, the lifecycle actions, rename, and a session's MCP view.
import { api } from "../../api/client";
import type {
  CreateSessionBody,
  PatchSessionBody,
  Project,
  ProjectRepository,
  SessionLimits,
  SessionMcpView,
  SessionView,
} from "../../api/types";

export const listSessions = () => api.get<SessionView[]>("/api/sessions");
export const listProjects = () => api.get<Project[]>("/api/projects");
export const fetchLimits = () => api.get<SessionLimits>("/api/limits");
export const createSession = (body: CreateSessionBody) => api.post<SessionView>("/api/sessions", body);
/** Whether a session of the project may have its own git worktree, and the branch it would start from. */
export const fetchRepository = (projectId: string) =>
  api.get<ProjectRepository>(`/api/projects/${encodeURIComponent(projectId)}/repository`);
export const sessionAction = (id: string, action: "rotate" | "enable" | "disable") =>
  api.post<SessionView>(`/api/sessions/${encodeURIComponent(id)}/${action}`);
export const deleteSession = (id: string) => api.del(`/api/sessions/${encodeURIComponent(id)}`);
export const fetchSessionMcp = (id: string) => api.get<SessionMcpView>(`/api/sessions/${encodeURIComponent(id)}/mcp`);
/** A rename: the session keeps its id, generation and URLs. */
export const renameSession = (id: string, body: PatchSessionBody) =>
  api.patch<SessionView>(`/api/sessions/${encodeURIComponent(id)}`, body);
