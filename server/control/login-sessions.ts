// Browser login sessions: a random id in an HttpOnly cookie, kept server-side in memory with an expiry.
// Only a digest of each id is stored, so the map never holds a usable cookie value.
import { createHash, randomBytes } from "node:crypto";

export const LOGIN_COOKIE = "urlbridge_session";
export const LOGIN_SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Oldest sessions are dropped beyond this; one operator rarely has more than a few browsers. */
export const MAX_LOGIN_SESSIONS = 32;
const SESSION_ID_BYTES = 32;

export interface LoginSession {
  expiresAt: number;
}

export interface LoginSessions {
  /** Starts a session; the returned id goes into the cookie and nowhere else. */
  create(): { id: string; expiresAt: number };
  lookup(id: string | undefined): LoginSession | undefined;
  revoke(id: string | undefined): void;
}

const digest = (id: string) => createHash("sha256").update(id, "utf8").digest("base64url");

export function createLoginSessions(now: () => number = Date.now): LoginSessions {
  const sessions = new Map<string, LoginSession>();

  function prune(): void {
    const t = now();
    for (const [key, s] of sessions) if (s.expiresAt <= t) sessions.delete(key);
    while (sessions.size >= MAX_LOGIN_SESSIONS) sessions.delete(sessions.keys().next().value!);
  }

  return {
    create() {
      prune();
      const id = randomBytes(SESSION_ID_BYTES).toString("base64url");
      const session = { expiresAt: now() + LOGIN_SESSION_TTL_MS };
      sessions.set(digest(id), session);
      return { id, expiresAt: session.expiresAt };
    },
    lookup(id) {
      if (!id) return undefined;
      const key = digest(id);
      const session = sessions.get(key);
      if (!session) return undefined;
      if (session.expiresAt <= now()) {
        sessions.delete(key);
        return undefined;
      }
      return session;
    },
    revoke(id) {
      if (id) sessions.delete(digest(id));
    },
  };
}
