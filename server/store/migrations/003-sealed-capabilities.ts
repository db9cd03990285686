// Capabilities at rest: the plaintext token column becomes a keyed digest (lookup) plus the token sealed with
// AES-256-GCM (capability-key.ts). Existing rows are converted in place; the old table's pages are zeroed
// (secure_delete) and database.ts vacuums and truncates the WAL afterwards, so no plaintext token survives.
import path from "node:path";
import { createCapabilitySealer, loadCapabilityKey } from "../capability-key.js";
import type { Migration } from "./index.js";

/** settings key holding the id of the key the capabilities are sealed under (index.ts checks it at open). */
export const CAPABILITY_KEY_ID_SETTING = "capability_key_id";

export const sealedCapabilities: Migration = {
  version: 3,
  name: "sealed-capabilities",
  sql: `
    CREATE TABLE capabilities_sealed (
      digest BLOB PRIMARY KEY,
      session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      generation INTEGER NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('init', 'read', 'mutation')),
      sealed BLOB NOT NULL,
      created_at INTEGER NOT NULL
    );
  `,
  scrub: true,
  up(db) {
    const sealer = createCapabilitySealer(loadCapabilityKey(path.dirname(db.name)).key);
    const insert = db.prepare(
      "INSERT INTO capabilities_sealed (digest, session_id, generation, kind, sealed, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    );
    const rows = db.prepare("SELECT token, session_id, generation, kind, created_at FROM capabilities").all() as Array<{
      token: string;
      session_id: string;
      generation: number;
      kind: string;
      created_at: number;
    }>;
    for (const r of rows)
      insert.run(sealer.digest(r.token), r.session_id, r.generation, r.kind, sealer.seal(r.token), r.created_at);
    db.exec(`
      DROP TABLE capabilities;
      ALTER TABLE capabilities_sealed RENAME TO capabilities;
      CREATE UNIQUE INDEX capabilities_session_kind ON capabilities(session_id, generation, kind);
    `);
    db.prepare(
      "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    ).run(CAPABILITY_KEY_ID_SETTING, sealer.keyId);
  },
};
