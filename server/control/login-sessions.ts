// Browser login sessions: a random id in an HttpOnly cookie, kept server-side with an expiry in the state
// store (migration 005), so a bridge restart does not log every browser out. Only a digest of each id is
// stored, so neither the database nor a backup of it holds a usable cookie value. The digest is keyed by the
// operator token's login binding, so a session lives only as long as the token it was made with.
import { createHmac, randomBytes } from "node:crypto";
import type { LoginSessionQueries } from "../store/login-sessions.js";

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

/**
 * `binding`: the operator credential's loginBinding. A cookie's digest under another token's binding matches no
 * row, so after the token changes (the file removed and the bridge restarted) every old cookie answers 401.
 */
export function createLoginSessions(
  stored: LoginSessionQueries,
  binding: Buffer,
  now: () => number = Date.now,
): LoginSessions {
  const digest = (id: string) => createHmac("sha256", binding).update(id, "utf8").digest("base64url");
  function prune(): void {
    stored.deleteExpired(now());
    stored.deleteOldest(stored.count() - (MAX_LOGIN_SESSIONS - 1));
  }

  return {
    create() {
      prune();
      const id = randomBytes(SESSION_ID_BYTES).toString("base64url");
      const createdAt = now();
      const expiresAt = createdAt + LOGIN_SESSION_TTL_MS;
      stored.insert({ digest: digest(id), createdAt, expiresAt });
      return { id, expiresAt };
    },
    lookup(id) {
      if (!id) return undefined;
      const key = digest(id);
      const session = stored.get(key);
      if (!session) return undefined;
      if (session.expiresAt <= now()) {
        stored.delete(key);
        return undefined;
      }
      return { expiresAt: session.expiresAt };
    },
    revoke(id) {
      if (id) stored.delete(digest(id));
    },
  };
}
