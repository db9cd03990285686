// A write's or edit's success may be recorded while its directory fsync is still running (journal.ts launch):
// such a record stays `unconfirmed` until the answer is sent, and start-up recovery checks any still unconfirmed
// against the file, so a rename a power loss undid is never replayed as a success.
import type { Migration } from "./index.js";

export const unconfirmedOutcomes: Migration = {
  version: 6,
  name: "unconfirmed-outcomes",
  sql: `
    ALTER TABLE intents ADD COLUMN unconfirmed INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX intents_unconfirmed ON intents(id) WHERE unconfirmed = 1;
  `,
};
