// The file a tool acts on, under either name agents use: `path`, or OpenCode's `filePath` (its read, edit and
// write take filePath). One of the two is required; both must then agree.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";

/** The two optional fields of a file tool's input schema (at least one is required; filePathOf checks). */
export function filePathFields(description: string) {
  const field = z.string().min(1);
  return {
    path: field.optional().describe(description),
    filePath: field.optional().describe("Same as path (OpenCode's name); give one of the two."),
  };
}

export function filePathOf(args: Record<string, unknown>): string {
  const { path, filePath } = args as { path?: string; filePath?: string };
  if (path !== undefined && filePath !== undefined && path !== filePath) {
    throw new ToolError(
      ErrorCode.conflictingParameters,
      `path and filePath name different files (${path}, ${filePath}); give one of them.`,
      {
        detail: { parameters: ["path", "filePath"] },
        retryable: false,
      },
    );
  }
  const given = path ?? filePath;
  if (given === undefined) {
    throw new ToolError(
      ErrorCode.invalidParameter,
      "path is required: the file, relative to the project root (src/app.ts) or as /project/src/app.ts (filePath is accepted too).",
      {
        detail: { parameter: "path" },
        retryable: false,
      },
    );
  }
  return given;
}
