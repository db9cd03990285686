// The outputSchema a tool publishes in tools/list: compact, so the listing every conversation pays for before its
// first call stays within the budget (docs/MCP.md "Budgets"). The kernel's full JSON Schema is folded into two
// branches, success and failure, each an object whose top-level fields keep their types, constants, small enums
// and `required`; nested values keep only their JSON type, and descriptions go (the tool's description and the
// answer's text carry the words). Every step only widens what a branch accepts, so whatever answer conforms to the
// full schema conforms to the compact one (the SDK checks structuredContent against what is published). Fields no
// branch requires are left out (extra fields are allowed): the schema names what an answer always carries. So are
// the fields only a pending or running answer requires (poll, agentAction): over MCP that answer's `next` is the
// tool call to make, and its words say so.

type Json = Record<string, unknown>;

/** Enums up to this many values stay (state, mode, newline); longer ones (encoding, errorCode) become their type. */
const MAX_ENUM_VALUES = 6;

/** The compact form of an output JSON Schema whose root is an object or a union of objects. */
export function compactOutputSchema(full: Json): Json {
  const branches = objectBranches(full);
  if (!branches) return { type: "object" };
  const failure = branches.filter((b) => constOf(b, "ok") === false);
  const success = branches.filter((b) => constOf(b, "ok") !== false);
  const folded = [success, failure]
    .filter((group) => group.length > 0)
    .map((group) => (group === failure ? failureBranch(foldBranches(group)) : foldBranches(group)));
  return folded.length === 1 ? { type: "object", ...folded[0] } : { type: "object", anyOf: folded };
}

/**
 * Every tool's failure is the one catalogued shape (docs/PROTOCOL.md §3): the branch keeps `ok: false` and what it
 * requires (errorCode, retryable), not their types again in each of the ~20 tools (~1.1 KB of a listing).
 */
function failureBranch(folded: Json): Json {
  const properties = folded.properties as Record<string, Json>;
  return { ...folded, properties: { ok: properties.ok ?? { const: false } } };
}

/** The object branches of a union (nested anyOf/oneOf flattened), or undefined when some branch is not an object. */
function objectBranches(schema: Json): Json[] | undefined {
  const union = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (union) {
    const out: Json[] = [];
    for (const branch of union) {
      const inner = objectBranches(branch);
      if (!inner) return undefined;
      out.push(...inner);
    }
    return out;
  }
  return schema.properties && typeof schema.properties === "object" ? [schema] : undefined;
}

function constOf(branch: Json, field: string): unknown {
  return ((branch.properties as Record<string, Json>)[field] ?? {}).const;
}

/**
 * One object that accepts what any of `branches` accepts: each field's alternatives joined, required only what
 * every branch requires, extra fields allowed.
 */
function foldBranches(branches: Json[]): Json {
  const fields = new Map<string, Json[]>();
  const requiredSomewhere = new Set(
    branches.filter((b) => !isUnfinished(b)).flatMap((b) => (b.required as string[] | undefined) ?? []),
  );
  for (const branch of branches) {
    for (const [name, field] of Object.entries(branch.properties as Record<string, Json>)) {
      if (!requiredSomewhere.has(name)) continue;
      const seen = fields.get(name);
      if (seen) seen.push(field);
      else fields.set(name, [field]);
    }
  }
  const properties: Record<string, Json> = {};
  for (const [name, alternatives] of fields) properties[name] = topField(alternatives);
  const required = branches
    .map((b) => new Set((b.required as string[] | undefined) ?? []))
    .reduce((acc, next) => new Set([...acc].filter((f) => next.has(f))));
  return { properties, ...(required.size > 0 ? { required: [...required] } : {}) };
}

/** A pending or running answer (the journal's unfinished envelope): the one that tells a URL reader to poll. */
function isUnfinished(branch: Json): boolean {
  return constOf(branch, "agentAction") === "poll";
}

/** A top-level field: its JSON types, and its values when every alternative names them (const or a small enum). */
function topField(alternatives: Json[]): Json {
  const types = new Set<string>();
  const values: unknown[] = [];
  let enumerated = true;
  for (const alt of alternatives) {
    const altTypes = typesOf(alt);
    if (!altTypes) return {};
    for (const t of altTypes) types.add(t);
    const altValues = valuesOf(alt);
    if (!altValues) enumerated = false;
    else for (const v of altValues) if (!values.includes(v)) values.push(v);
  }
  const type = types.size === 1 ? [...types][0] : [...types].sort();
  if (enumerated && values.length === 1) return { const: values[0] };
  if (enumerated && values.length > 1 && values.length <= MAX_ENUM_VALUES) return { type, enum: values };
  return { type };
}

/** The fixed values a field may take, when it names them (const, enum, or a union of those); else undefined. */
function valuesOf(schema: Json): unknown[] | undefined {
  if ("const" in schema) return [schema.const];
  if (Array.isArray(schema.enum)) return schema.enum as unknown[];
  const union = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (!union) return undefined;
  const out: unknown[] = [];
  for (const branch of union) {
    const inner = valuesOf(branch);
    if (!inner) return undefined;
    out.push(...inner);
  }
  return out;
}

/** The JSON types a schema admits (integer widened to number), or undefined when it admits any value. */
function typesOf(schema: Json): Set<string> | undefined {
  const union = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (union) {
    const out = new Set<string>();
    for (const branch of union) {
      const inner = typesOf(branch);
      if (!inner) return undefined;
      for (const t of inner) out.add(t);
    }
    return out;
  }
  const type = schema.type;
  if (typeof type === "string") return new Set([type === "integer" ? "number" : type]);
  if (Array.isArray(type)) return new Set((type as string[]).map((t) => (t === "integer" ? "number" : t)));
  if ("const" in schema) return new Set([jsonTypeOf(schema.const)]);
  return undefined;
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "object" ? "object" : typeof value === "bigint" ? "number" : (typeof value as string);
}
