// The ordered list of schema migrations. Append new ones; never edit one that has shipped.
import { coreSchema } from "./001-core.js";
import { journalSchema } from "./002-journal.js";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [coreSchema, journalSchema];
