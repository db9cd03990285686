// The per-project `web` permission (webfetch, websearch): off for every existing project, as for new ones.
import type { Migration } from "./index.js";

export const webPermission: Migration = {
  version: 4,
  name: "web-permission",
  sql: `ALTER TABLE projects ADD COLUMN perm_web INTEGER NOT NULL DEFAULT 0;`,
};
