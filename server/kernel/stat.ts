// stat (/t): kind, size and modification time of one path, without reading it.
import fs from "node:fs/promises";
import { z } from "zod";
import { resolveInsideRoot } from "../sandbox/paths.js";
import { defineTool } from "./tool.js";

export const statTool = defineTool({
  id: "stat",
  route: "t",
  longRoutes: ["metadata"],
  capability: "read",
  description: "Kind, size and modification time of a path.",
  example: "/t?path=src/app.ts",
  schema: z.object({ path: z.string() }),
  url: { aliases: { file: "path" } },
  async execute(args, ctx) {
    const target = await resolveInsideRoot(ctx.project.root, args.path);
    if (!target.exists) return { ok: true, path: target.display, exists: false };
    const info = await fs.stat(target.absolute);
    return {
      ok: true,
      path: target.display,
      exists: true,
      kind: info.isDirectory() ? "directory" : info.isFile() ? "file" : "other",
      size: info.size,
      modified: info.mtime.toISOString(),
      mode: `0${(info.mode & 0o777).toString(8)}`,
    };
  },
});
