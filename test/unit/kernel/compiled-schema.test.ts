// Every tool input schema parsed through zod's compiled parser (server/kernel/tool/compiled-schema.ts: runTool and
// the MCP direct path use it) must answer exactly what zod's runtime parser answers: the same verdict, the same
// parsed value (key order included: it is echoed in answers), the same issues on a refusal.
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { createReadTools } from "../../../server/kernel/index.js";
import { safeParseCompiled } from "../../../server/kernel/tool/compiled-schema.js";
import { MCP_TOOL_SPECS } from "../../../server/mcp/tool-listing.js";
import { mutationTools } from "../../../server/mutation/index.js";

const VALUES: unknown[] = [
  "a",
  "",
  "src/app.ts",
  "x".repeat(300),
  ["a"],
  [],
  ["a", "b"],
  [1],
  0,
  1,
  -1,
  1.5,
  2000,
  1e9,
  true,
  false,
  null,
  {},
  { a: 1 },
];

/** Candidates built from a schema's own keys: each key alone with each value, all keys at once, a fixed mix. */
function candidates(keys: string[]): unknown[] {
  const out: unknown[] = [undefined, null, "text", 5, [], {}, { unknown: 1 }];
  for (const value of VALUES) {
    out.push(Object.fromEntries(keys.map((k) => [k, value])));
    for (const key of keys) out.push({ [key]: value }, { [key]: value, extra: true });
  }
  // A deterministic mix: key i takes value (i * 7 + round) mod VALUES.length.
  for (let round = 0; round < 40; round++)
    out.push(Object.fromEntries(keys.map((k, i) => [k, VALUES[(i * 7 + round) % VALUES.length]])));
  return out;
}

const schemas: Array<[string, z.ZodType]> = [
  ...[...createReadTools(), ...mutationTools].map((tool): [string, z.ZodType] => [`kernel ${tool.id}`, tool.schema]),
  ...MCP_TOOL_SPECS.map((spec): [string, z.ZodType] => [`mcp ${spec.name}`, spec.input]),
];

describe("compiled schema parsing", () => {
  let accepted = 0;
  it.each(schemas)("%s: the compiled parser answers as the runtime parser", (_name, schema) => {
    const keys = Object.keys((schema as unknown as { shape?: Record<string, unknown> }).shape ?? {});
    for (const candidate of candidates(keys)) {
      const runtime = schema.safeParse(candidate);
      const compiled = safeParseCompiled(schema, candidate);
      expect(compiled.success).toBe(runtime.success);
      if (runtime.success && compiled.success) {
        expect(JSON.stringify(compiled.data)).toBe(JSON.stringify(runtime.data));
        expect(compiled.data).toStrictEqual(runtime.data);
        accepted++;
      } else {
        expect(compiled.error?.issues).toStrictEqual(runtime.error?.issues);
      }
    }
  });
  it("exercised accepted inputs too, not only refusals", () => {
    expect(accepted).toBeGreaterThan(100);
  });
});
