// Activity page calls: recent data-plane calls (already redacted by the server) and the session names.
import { api, query } from "../../api/client";
import type { ActivityEntry, OperatorPtyView, SessionView } from "../../api/types";

export const ACTIVITY_PAGE_SIZE = 200;

export const listActivity = (sessionId: string | undefined, after: number | undefined) =>
  api.get<ActivityEntry[]>(`/api/activity${query({ sessionId, after, limit: ACTIVITY_PAGE_SIZE })}`);
export const listSessions = () => api.get<SessionView[]>("/api/sessions");
/** The live pty=1 processes with their current screens (read-only). */
export const listTerminals = (sessionId: string | undefined) =>
  api.get<OperatorPtyView[]>(`/api/terminals${query({ sessionId })}`);
