// What a tool publishes in tools/list beyond its description, minus what says nothing to a client (docs/MCP.md
// "Budgets"). The inputSchema: the kernel's zod schema, converted as the SDK converts it. `$schema` goes because JSON Schema 2020-12 is MCP's default dialect when a schema
// names none; an integer's `maximum`/`minimum` go where they are only ±Number.MAX_SAFE_INTEGER (zod's bound for
// every .int()); ~1.3 KB of a full listing. Validation is untouched: the SDK still validates arguments with the zod
// schema itself. The annotations: a hint equal to the value MCP defines for its absence is left out, and
// destructiveHint and idempotentHint, which mean something only when readOnlyHint is false, go from read-only tools.
import type { z } from "zod";

type Json = Record<string, unknown>;

interface JsonSchemaConverter {
  input(options: unknown): Json;
  output(options: unknown): Json;
}

/** `schema` as the SDK sees it, with its tools/list JSON Schema made compact; everything else is the schema's own. */
export function publishedInput<T extends z.ZodObject>(schema: T): T {
  const standard = schema["~standard"] as unknown as Record<string, unknown> & { jsonSchema: JsonSchemaConverter };
  const listed = {
    ...standard,
    jsonSchema: {
      input: (options: unknown) => compactInputJson(standard.jsonSchema.input(options)),
      output: (options: unknown) => standard.jsonSchema.output(options),
    },
  };
  return new Proxy(schema, {
    get: (target, property, receiver) =>
      property === "~standard" ? listed : (Reflect.get(target, property, receiver) as unknown),
  });
}

/** A converted input schema without `$schema` and without the integer bounds that are only JavaScript's own. */
export function compactInputJson(json: Json): Json {
  const { $schema: _dialect, ...rest } = json;
  return strip(rest) as Json;
}

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== "object") return value;
  const out: Json = {};
  for (const [key, inner] of Object.entries(value as Json)) {
    if (key === "maximum" && inner === Number.MAX_SAFE_INTEGER) continue;
    if (key === "minimum" && inner === Number.MIN_SAFE_INTEGER) continue;
    out[key] = strip(inner);
  }
  return out;
}

/** MCP's meaning of an absent hint (the ToolAnnotations defaults). */
const ANNOTATION_DEFAULTS: Record<string, boolean> = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

/** The annotations as published: what a client would read the same way without them is left out. */
export function publishedAnnotations<T extends Record<string, unknown>>(annotations: T): Partial<T> {
  const readOnly = annotations.readOnlyHint === true;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(annotations)) {
    if (ANNOTATION_DEFAULTS[name] === value) continue;
    if (readOnly && (name === "destructiveHint" || name === "idempotentHint")) continue;
    out[name] = value;
  }
  return out as Partial<T>;
}
