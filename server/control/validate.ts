// Parses control-API input with a zod schema; failures become 400 invalid_request naming the field.
import type { z } from "zod";
import { ControlError, ControlErrorCode } from "./errors.js";

export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  throw new ControlError(ControlErrorCode.invalidRequest, `${where}${issue.message}`);
}
