// Stored operator login sessions: digest -> expiry (server/control/login-sessions.ts owns the cookie side).
import type { Db } from "./database.js";

export interface StoredLoginSession {
  digest: string;
  createdAt: number;
  expiresAt: number;
}

export function createLoginSessionQueries(db: Db) {
  const insert = db.prepare("INSERT INTO login_sessions (digest, created_at, expires_at) VALUES (?, ?, ?)");
  const get = db.prepare(
    "SELECT digest, created_at AS createdAt, expires_at AS expiresAt FROM login_sessions WHERE digest = ?",
  );
  const remove = db.prepare("DELETE FROM login_sessions WHERE digest = ?");
  const removeExpired = db.prepare("DELETE FROM login_sessions WHERE expires_at <= ?");
  const count = db.prepare("SELECT COUNT(*) AS n FROM login_sessions");
  // Oldest first: what is dropped when there are too many.
  const removeOldest = db.prepare(
    "DELETE FROM login_sessions WHERE digest IN (SELECT digest FROM login_sessions ORDER BY created_at, digest LIMIT ?)",
  );
  return {
    insert: (s: StoredLoginSession): void => {
      insert.run(s.digest, s.createdAt, s.expiresAt);
    },
    get: (digest: string): StoredLoginSession | undefined => get.get(digest) as StoredLoginSession | undefined,
    delete: (digest: string): void => {
      remove.run(digest);
    },
    deleteExpired: (now: number): void => {
      removeExpired.run(now);
    },
    count: (): number => (count.get() as { n: number }).n,
    deleteOldest: (n: number): void => {
      if (n > 0) removeOldest.run(n);
    },
  };
}

export type LoginSessionQueries = ReturnType<typeof createLoginSessionQueries>;
