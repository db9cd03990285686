// stat (/t): kind, size and modification time of one path, without reading it. Kinds are named as in
// /r listings and /f results (file, dir, other).
import { z } from "zod";
import { resolveInsideRoot } from "../sandbox/paths.js";
import { statNow } from "./file-read.js";
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
  execute(args, ctx) {
    const target = resolveInsideRoot(ctx.project.root, args.path);
    const info = target.exists ? statNow(target.absolute) : undefined;
    if (!info) return { ok: true, path: target.display, exists: false };
    return {
      ok: true,
      path: target.display,
      exists: true,
      kind: info.isDirectory() ? "dir" : info.isFile() ? "file" : "other",
      size: info.size,
      modified: info.mtime.toISOString(),
      mode: `0${(info.mode & 0o777).toString(8)}`,
    };
  },
});
