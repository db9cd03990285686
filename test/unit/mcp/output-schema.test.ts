// The compact outputSchema tools/list publishes (server/mcp/output-schema.ts): it accepts every answer the kernel's
// full schema accepts (the SDK checks each success against what is published), still requires what every answer
// kind carries, and is a fraction of the size.
import { fromJsonSchema } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { grepOutput } from "../../../server/kernel/search/grep.js";
import { compactOutputSchema } from "../../../server/mcp/output-schema.js";
import { failureOutput, outputJsonSchema } from "../../../server/mcp/server.js";

async function accepts(json: Record<string, unknown>, value: unknown): Promise<boolean> {
  const result = await fromJsonSchema(json as Parameters<typeof fromJsonSchema>[0])["~standard"].validate(value);
  return !("issues" in result && result.issues);
}

/** A union like the journaled tools': discriminated success kinds, nullable and nested fields, and the failure shape. */
const success = z.union([
  z.strictObject({
    ok: z.literal(true),
    state: z.literal("succeeded"),
    callId: z.string(),
    exitCode: z.number().int().nullable(),
    stdout: z.string(),
    detail: z.strictObject({ bytes: z.number().int() }).optional(),
    dedupe: z.enum(["replayed", "joined"]).optional(),
  }),
  z.strictObject({
    ok: z.literal(true),
    state: z.enum(["pending", "running"]),
    callId: z.string(),
    poll: z.string(),
    progress: z.object({ at: z.number() }).optional(),
  }),
]);
const full = z.union([success, failureOutput]);

const valid: unknown[] = [
  { ok: true, state: "succeeded", callId: "c1", exitCode: 0, stdout: "hi\n" },
  { ok: true, state: "succeeded", callId: "c1", exitCode: null, stdout: "", detail: { bytes: 3 }, dedupe: "replayed" },
  { ok: true, state: "running", callId: "c2", poll: 'mutation_result {"callId":"c2"}', progress: { at: 1.5 } },
  {
    ok: false,
    errorCode: "stale_read",
    retryable: false,
    repairHint: "read it first",
    errorDetail: { path: "/project/a" },
    extra: 1,
  },
];
const invalid: Array<[string, unknown]> = [
  ["a success without callId", { ok: true, state: "succeeded", exitCode: 0, stdout: "" }],
  ["a failure without errorCode", { ok: false, retryable: false }],
  ["a state no kind has", { ok: true, state: "exploded", callId: "c" }],
  ["a string where a number goes", { ok: true, state: "succeeded", callId: "c", exitCode: "0", stdout: "" }],
  ["ok missing", { state: "succeeded", callId: "c", exitCode: 0, stdout: "" }],
];

describe("compactOutputSchema", () => {
  const compact = compactOutputSchema(outputJsonSchema(full));

  it.each(valid.map((v) => [JSON.stringify(v).slice(0, 60), v]))(
    "accepts what the full schema accepts: %s",
    async (_name, value) => {
      expect(full.safeParse(value).success).toBe(true);
      expect(await accepts(compact, value)).toBe(true);
    },
  );

  it.each(invalid)("still refuses %s", async (_name, value) => {
    expect(await accepts(compact, value)).toBe(false);
  });

  it("keeps ok, the fields every kind requires, types and small enums at the top, nothing nested", () => {
    expect(compact).toMatchObject({
      type: "object",
      anyOf: [
        {
          properties: {
            ok: { const: true },
            state: { type: "string", enum: ["succeeded", "pending", "running"] },
            exitCode: { type: ["null", "number"] },
          },
          required: ["ok", "state", "callId"],
        },
        {
          // The one catalogued failure shape: what it requires, without the types again in every tool.
          properties: { ok: { const: false } },
          required: ["ok", "errorCode", "retryable"],
        },
      ],
    });
    expect(JSON.stringify(compact)).not.toContain("description");
    expect(JSON.stringify(compact)).not.toContain("additionalProperties");
  });

  it("accepts a real kernel answer (grep) and is a fraction of its full schema", async () => {
    const schema = z.union([grepOutput, failureOutput]);
    const fullJson = outputJsonSchema(schema);
    const small = compactOutputSchema(fullJson);
    const answer = {
      ok: true,
      engine: "rg",
      path: "/project",
      pattern: "x",
      regex: true,
      matchedLines: 1,
      files: [{ path: "/project/a.ts", lines: [{ line: 3, text: "x" }] }],
      truncated: false,
    };
    expect(schema.safeParse(answer).success).toBe(true);
    expect(await accepts(small, answer)).toBe(true);
    expect(JSON.stringify(small).length * 4).toBeLessThan(JSON.stringify(fullJson).length);
  });
});
