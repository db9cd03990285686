// stat (/t): kind, size and modification time of one path, without reading it. Kinds are named as in
// /r listings and /f results (file, dir, other).
import { z } from "zod";
import { withHeldPath } from "../../sandbox/fd-walk.js";
import { defineTool } from "../tool/definition.js";

/** What /t answers. A missing path is a success with exists: false, so the other fields are present only when it exists. */
export const statOutput = z.strictObject({
  ok: z.literal(true),
  path: z.string().describe("The path in /project/... form."),
  exists: z.boolean().describe("false: nothing is at this path (kind, size, modified and mode are then absent)."),
  kind: z
    .enum(["file", "dir", "other"])
    .optional()
    .describe("What the path is, symlinks inside the project followed (other: a socket, device or FIFO)."),
  size: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Size in bytes as the file system reports it (for a directory, its own entry size)."),
  modified: z.string().optional().describe("Last modification time, ISO 8601 in UTC."),
  mode: z
    .string()
    .optional()
    .describe('Permission bits in octal after a leading 0, e.g. "0644"; not zero-padded, so 0o44 shows as "044".'),
});

export type StatOutput = z.infer<typeof statOutput>;

export const statTool = defineTool({
  id: "stat",
  route: "t",
  longRoutes: ["metadata"],
  capability: "read",
  description: "Kind, size and modification time of a path.",
  example: "/t?path=src/app.ts",
  schema: z.object({ path: z.string() }),
  output: statOutput,
  url: { aliases: { file: "path" } },
  execute(args, ctx) {
    // fstat of the held target: the very object the walk found, with symlinks inside the root followed.
    const { display, stats: info } = withHeldPath(ctx.project.root, args.path, {}, (t) => ({
      display: t.display,
      stats: t.stats,
    }));
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
