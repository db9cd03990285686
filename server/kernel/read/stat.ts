// stat (/t): kind, size and modification time of one path, without reading it. Kinds are named as in
// /r listings and /f results (file, dir, other).
import { z } from "zod";
import { withHeldPath } from "../../sandbox/fd-walk.js";
import { defineTool } from "../tool/definition.js";

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
    // fstat of the held target: the very object the walk found, with symlinks inside the root followed.
    const { display, stats: info } = withHeldPath(ctx.project.root, args.path, {}, (t) => ({ display: t.display, stats: t.stats }));
    if (!info) return { ok: true, path: display, exists: false };
    return {
      ok: true,
      path: display,
      exists: true,
      kind: info.isDirectory() ? "dir" : info.isFile() ? "file" : "other",
      size: info.size,
      modified: info.mtime.toISOString(),
      mode: `0${(info.mode & 0o777).toString(8)}`,
    };
  },
});
