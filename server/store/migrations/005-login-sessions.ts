// Operator login sessions (the UI's cookie), so a bridge restart does not log every browser out. Only a
// SHA-256 digest of each cookie value is stored, never the value itself; rows carry their expiry.
import type { Migration } from "./index.js";

export const loginSessionsSchema: Migration = {
  version: 5,
  name: "login-sessions",
  sql: `
    CREATE TABLE login_sessions (
      digest TEXT PRIMARY KEY,
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    );
    CREATE INDEX login_sessions_expiry ON login_sessions(expires_at);
  `,
};
