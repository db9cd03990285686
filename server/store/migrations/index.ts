// The ordered list of schema migrations. Append new ones; never edit one that has shipped.
import { coreSchema } from "./001-core.js";
import { journalSchema } from "./002-journal.js";
import { sealedCapabilities } from "./003-sealed-capabilities.js";
import { webPermission } from "./004-web-permission.js";
import { loginSessionsSchema } from "./005-login-sessions.js";
import { unconfirmedOutcomes } from "./006-unconfirmed-outcomes.js";
import { concealedResults } from "./007-concealed-results.js";
import { fileChangesSchema } from "./008-file-changes.js";
import { reviewNoticesSchema } from "./009-review-notices.js";
import { sessionWorktreesSchema } from "./010-session-worktrees.js";
import { reviewBlobChunksSchema } from "./011-review-blob-chunks.js";
import type { Db } from "../database.js";

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Data conversion run after `sql`, in the same transaction (the database file's folder is the state dir). */
  up?: (db: Db) => void;
  /** The migration removed secrets: zero freed pages, then vacuum and truncate the WAL once it commits. */
  scrub?: boolean;
}

export const migrations: Migration[] = [
  coreSchema,
  journalSchema,
  sealedCapabilities,
  webPermission,
  loginSessionsSchema,
  unconfirmedOutcomes,
  concealedResults,
  fileChangesSchema,
  reviewNoticesSchema,
  sessionWorktreesSchema,
  reviewBlobChunksSchema,
];
