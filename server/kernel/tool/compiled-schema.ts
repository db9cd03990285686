// The schemas every call parses (a tool's input, an MCP tool's arguments), through zod's ahead-of-time compiled
// parser (z.compile): generated code for the common valid input, zod's own runtime parser for everything else, so
// the parsed value and every refusal's issues are zod's as before. Compiled once per schema, on first use.
import { z } from "zod";

const compiled = new WeakMap<z.ZodType, z.ZodType>();

/** `schema.safeParse(value)`, the same answer, through the schema's compiled parser. */
export function safeParseCompiled<T extends z.ZodType>(schema: T, value: unknown): z.ZodSafeParseResult<z.output<T>> {
  let fast = compiled.get(schema) as T | undefined;
  // z.compile never throws: a schema it cannot compile comes back as it is and parses as before.
  if (!fast) compiled.set(schema, (fast = z.compile(schema)));
  return fast.safeParse(value) as z.ZodSafeParseResult<z.output<T>>;
}
