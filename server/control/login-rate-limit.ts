// Limits failed operator-token logins per client address (sliding window), so the login form
// cannot be used to guess the token. A blocked client is refused before its token is checked.

export const LOGIN_FAILURE_LIMIT = 10;
export const LOGIN_FAILURE_WINDOW_MS = 5 * 60 * 1000;
/** Bound on remembered addresses; the least recently failing ones are forgotten first. */
export const MAX_TRACKED_LOGIN_CLIENTS = 1024;

export type LoginGate = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface LoginRateLimiter {
  check(client: string): LoginGate;
  recordFailure(client: string): void;
  recordSuccess(client: string): void;
}

export function createLoginRateLimiter(now: () => number = Date.now): LoginRateLimiter {
  const failures = new Map<string, number[]>();

  function recent(client: string): number[] {
    const cutoff = now() - LOGIN_FAILURE_WINDOW_MS;
    const list = (failures.get(client) ?? []).filter((t) => t > cutoff);
    if (list.length === 0) failures.delete(client);
    else failures.set(client, list);
    return list;
  }

  return {
    check(client) {
      const list = recent(client);
      if (list.length < LOGIN_FAILURE_LIMIT) return { allowed: true };
      const freeAt = list[list.length - LOGIN_FAILURE_LIMIT]! + LOGIN_FAILURE_WINDOW_MS;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((freeAt - now()) / 1000)) };
    },
    recordFailure(client) {
      const list = recent(client);
      list.push(now());
      failures.delete(client);
      failures.set(client, list.slice(-LOGIN_FAILURE_LIMIT));
      while (failures.size > MAX_TRACKED_LOGIN_CLIENTS) failures.delete(failures.keys().next().value!);
    },
    recordSuccess(client) {
      failures.delete(client);
    },
  };
}
