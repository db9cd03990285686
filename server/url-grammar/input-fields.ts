// What a tool's input schema says about each top-level field (kind, numeric bounds, enum options), read once
// per schema through zod 4's public `def`: the URL binder converts strings by it, validation words errors by it.
import type { z } from "zod";

export type FieldKind = "string" | "number" | "boolean" | "enum" | "array" | "other";

export interface FieldInfo {
  kind: FieldKind;
  element?: FieldInfo;
  min?: number;
  max?: number;
  options?: readonly string[];
}

/** Wrappers that do not change what a field accepts on the wire: look through them to the field's own type. */
const WRAPPERS = new Set(["optional", "default", "nullable", "readonly"]);

export function describeField(schema: z.ZodType): FieldInfo {
  let current: z.ZodType = schema;
  for (;;) {
    const { type } = current.def;
    if (WRAPPERS.has(type)) {
      current = (current as z.ZodOptional).unwrap() as z.ZodType;
      continue;
    }
    if (type === "pipe") {
      current = (current as z.ZodPipe).in as z.ZodType;
      continue;
    }
    switch (type) {
      case "string":
        return { kind: "string" };
      case "number": {
        const { minValue, maxValue } = current as z.ZodNumber;
        return {
          kind: "number",
          min: Number.isFinite(minValue ?? NaN) ? (minValue as number) : undefined,
          max: Number.isFinite(maxValue ?? NaN) ? (maxValue as number) : undefined,
        };
      }
      case "boolean":
        return { kind: "boolean" };
      case "enum":
        return { kind: "enum", options: (current as z.ZodEnum).options as readonly string[] };
      case "array":
        return { kind: "array", element: describeField((current as z.ZodArray<z.ZodType>).element) };
      default:
        return { kind: "other" };
    }
  }
}

/** A schema's fields and what each one is, worked out once per schema rather than on every call. */
export interface SchemaFields {
  shape: Record<string, z.ZodType>;
  names: string[];
  info: Map<string, FieldInfo>;
}

const fieldsBySchema = new WeakMap<z.ZodObject, SchemaFields>();

export function fieldsOf(schema: z.ZodObject): SchemaFields {
  let fields = fieldsBySchema.get(schema);
  if (!fields) {
    const shape = schema.shape as Record<string, z.ZodType>;
    const names = Object.keys(shape);
    fields = { shape, names, info: new Map(names.map((name) => [name, describeField(shape[name]!)])) };
    fieldsBySchema.set(schema, fields);
  }
  return fields;
}
