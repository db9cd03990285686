// The mutation tools' output schemas and the journal envelope: every one converts to JSON Schema (what MCP
// publishes as outputSchema), and the envelope schemas accept exactly what present.ts's present* functions build.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ExactUrls } from "../../../server/kernel/tool/definition.js";
import { createMutationTools } from "../../../server/mutation/index.js";
import {
  failedAnswer,
  journaledOutput,
  pollFailure,
  pollOutputOf,
  recoveredOutput,
  tombstoneEnvelope,
  unfinishedEnvelope,
  wireOutputOf,
} from "../../../server/mutation/journal/envelope.js";
import {
  presentFinished,
  presentTombstone,
  presentUnfinished,
  type TombstoneRow,
} from "../../../server/mutation/journal/present.js";
import { pollOutput } from "../../../server/mutation/journal/poll.js";
import { terminalOutput } from "../../../server/mutation/terminal/terminal.js";
import { writeOutput } from "../../../server/mutation/files/write.js";
import type { IntentRow } from "../../../server/store/journal.js";

type JsonSchema = Record<string, unknown>;

/** Every mutation tool, git_commit (/h) included. */
const mutationTools = createMutationTools(undefined);

/** Every object schema in a converted JSON Schema, through anyOf/oneOf and nested properties. */
function objectsIn(schema: unknown, found: JsonSchema[] = []): JsonSchema[] {
  if (Array.isArray(schema)) for (const s of schema) objectsIn(s, found);
  else if (schema && typeof schema === "object") {
    const s = schema as JsonSchema;
    if (s.type === "object" && s.properties) found.push(s);
    for (const value of Object.values(s)) objectsIn(value, found);
  }
  return found;
}

const journaled = mutationTools.filter((t) => t.journal?.record !== false);

/** A URL factory shaped like the gateway's, for the present* functions. */
const urls: ExactUrls = {
  to: (base, route, params) =>
    `http://127.0.0.1:1/v0/cap/${base}/${route}?${params.map(([k, v]) => `${k}=${v}`).join("&")}`,
  repair: () => undefined,
};

describe("mutation tool output schemas", () => {
  it("declares an output on every mutation tool", () => {
    expect(mutationTools.map((t) => [t.id, t.output !== undefined])).toEqual(mutationTools.map((t) => [t.id, true]));
  });

  it.each(mutationTools.map((t) => [t.id, t] as const))(
    "%s: output and wire output convert to JSON Schema with ok:true and closed objects",
    (_id, tool) => {
      for (const schema of [tool.output!, wireOutputOf(tool)!]) {
        const json = z.toJSONSchema(schema);
        const objects = objectsIn(json);
        expect(objects.length).toBeGreaterThan(0);
        // Top-level answers (those with ok) are closed: a field nobody declared fails validation.
        const answers = objects.filter((o) => (o.properties as JsonSchema).ok !== undefined);
        expect(answers.length).toBeGreaterThan(0);
        for (const answer of answers) {
          expect((answer.properties as JsonSchema).ok).toEqual({ type: "boolean", const: true });
          expect(answer.additionalProperties).toBe(false);
        }
      }
    },
  );

  it.each(journaled.map((t) => [t.id, t] as const))(
    "%s: journaledOutput adds callId/state to every success shape and offers the unfinished envelope",
    (_id, tool) => {
      const json = z.toJSONSchema(journaledOutput(tool.output!));
      const answers = objectsIn(json).filter((o) => (o.properties as JsonSchema).ok !== undefined);
      const states = answers.map((o) => (o.properties as { state: JsonSchema }).state);
      expect(states.every((s) => s !== undefined)).toBe(true);
      expect(answers.every((o) => (o.required as string[]).includes("callId"))).toBe(true);
      expect(states.some((s) => s.const === "succeeded")).toBe(true);
      expect(states.some((s) => JSON.stringify(s.enum) === JSON.stringify(["pending", "running"]))).toBe(true);
    },
  );

  it("publishes descriptions an agent can act on", () => {
    const json = JSON.stringify(z.toJSONSchema(terminalOutput));
    for (const phrase of [
      "exact URL that ends the whole process tree",
      "null when a signal ended it",
      "Present when the output was cut",
    ])
      expect(json).toContain(phrase);
  });

  it("discriminates terminal results by mode", () => {
    const json = z.toJSONSchema(terminalOutput) as { oneOf: JsonSchema[] };
    expect(json.oneOf.map((o) => (o.properties as { mode: JsonSchema }).mode.const)).toEqual([
      "foreground",
      "background",
      "stop",
      "pty",
    ]);
  });

  it("rejects a field the tool does not declare, and a missing one", () => {
    const write = { ok: true, path: "/project/a.txt", created: true, bytes: 3, encoding: "utf-8", newline: "none" };
    expect(writeOutput.safeParse(write).success).toBe(true);
    expect(writeOutput.safeParse({ ...write, extra: 1 }).success).toBe(false);
    const { bytes: _bytes, ...missing } = write;
    expect(writeOutput.safeParse(missing).success).toBe(false);
  });

  it("refuses an output that is not an object or a union of objects", () => {
    expect(() => journaledOutput(z.string() as never)).toThrow(/zod object or a union of objects/);
  });
});

describe("journal envelope", () => {
  const write = {
    ok: true as const,
    path: "/project/a.txt",
    created: false,
    bytes: 3,
    encoding: "utf-8" as const,
    newline: "lf" as const,
  };
  const wire = journaledOutput(writeOutput);

  it.each([
    ["a new intent", undefined],
    ["a replay", "replayed"],
    ["a join", "joined"],
  ] as const)("accepts presentFinished of a success for %s", (_name, dedupe) => {
    expect(wire.parse(presentFinished("auto:write:0123", write, dedupe))).toMatchObject({
      callId: "auto:write:0123",
      state: "succeeded",
    });
  });

  it("accepts a replay's repeat URL and recovery's body", () => {
    const replay = {
      ...presentFinished("c1", write, "replayed"),
      repeat: "http://x/repeat",
      repeatHint: "The project changed since this ran.",
    };
    expect(wire.safeParse(replay).success).toBe(true);
    const recovered = { ok: true as const, path: "/project/a.txt", recovered: true as const, hint: "landed" };
    expect(recoveredOutput.parse(recovered)).toEqual(recovered);
    expect(wire.safeParse(presentFinished("c1", recovered, "replayed")).success).toBe(true);
  });

  it.each([
    ["pending", undefined, undefined],
    ["running", "joined", { phase: "running", since: "2026-12-01T00:00:00.000Z" }],
    ["pending", "replayed", { phase: "queued", position: 1, slots: 2 }],
  ] as const)("accepts presentUnfinished (%s, dedupe %s)", (state, dedupe, progress) => {
    const body = presentUnfinished("c2", state, urls, dedupe, progress, undefined, undefined);
    expect(unfinishedEnvelope.parse(body)).toEqual(body);
    expect(wire.safeParse(body).success).toBe(true);
    expect(body.poll).toBe(
      urls.to("m", "j", [
        ["call", "c2"],
        ["wait", 1000],
      ]),
    );
  });

  it.each([
    [undefined, 1000],
    [0, 1000],
    [500, 500],
    [2000, 2000],
    [20000, 20000],
  ] as const)("keeps the caller's wait=%s in the poll URL as wait=%s (issue 27 item 4)", (wait, polled) => {
    const body = presentUnfinished("c3", "running", urls, undefined, undefined, undefined, wait);
    expect(body.poll).toBe(
      urls.to("m", "j", [
        ["call", "c3"],
        ["wait", polled],
      ]),
    );
  });

  it("accepts presentTombstone with and without retry", () => {
    const row: IntentRow = {
      id: 1,
      sessionId: "s",
      generation: 1,
      projectId: "p",
      projectRoot: "/tmp",
      callId: "c3",
      tool: "terminal",
      argsHash: "h",
      state: "failed",
      result: undefined,
      errorCode: "command_timed_out",
      checkpoint: undefined,
      epochAfter: 2,
      createdAt: 0,
      startedAt: 1,
      finishedAt: 2,
    };
    const tombstone = row as TombstoneRow;
    expect(tombstoneEnvelope.parse(presentTombstone(tombstone, "http://x/retry", "replayed"))).toMatchObject({
      state: "failed",
      errorDetail: { outcomeErrorCode: "command_timed_out" },
    });
    expect(
      pollFailure.safeParse({ ...presentTombstone(tombstone, undefined, undefined), tool: "terminal" }).success,
    ).toBe(true);
  });

  it("accepts a finished failure with its tool-specific recovery fields", () => {
    const failure = {
      ok: false as const,
      errorCode: "stale_read" as const,
      retryable: true,
      repairHint: "Read first.",
      agentAction: "reread_then_retry" as const,
      read: "http://x/r",
    };
    expect(failedAnswer.safeParse(presentFinished("c4", failure, undefined)).success).toBe(true);
    expect(failedAnswer.safeParse({ ...failure, callId: "c4", state: "succeeded" }).success).toBe(false);
    expect(
      failedAnswer.safeParse({ ...failure, errorCode: "no_such_code", callId: "c4", state: "failed" }).success,
    ).toBe(false);
  });
});

describe("poll output", () => {
  it("converts to JSON Schema and names each native tool's success by its tool id", () => {
    const json = JSON.stringify(z.toJSONSchema(pollOutput));
    for (const id of ["write", "edit", "apply_patch", "terminal", "revert"]) expect(json).toContain(`"const":"${id}"`);
    z.toJSONSchema(pollFailure);
  });

  it("accepts a recorded success with its tool, and refuses it under another tool's id", () => {
    const write = {
      ok: true,
      path: "/project/a.txt",
      created: true,
      bytes: 1,
      encoding: "utf-8",
      newline: "none",
      callId: "c",
      state: "succeeded",
    };
    expect(pollOutput.safeParse({ ...write, tool: "write" }).success).toBe(true);
    expect(pollOutput.safeParse({ ...write, tool: "edit" }).success).toBe(false);
  });

  it("covers the tools it is built over, e.g. a plugin's mutation", () => {
    const probe = {
      ...mutationTools[0]!,
      id: "demo_probe",
      output: z.strictObject({ ok: z.literal(true), label: z.string() }),
    };
    const schema = pollOutputOf([probe]);
    expect(
      schema.safeParse({ ok: true, label: "x", callId: "c", state: "succeeded", tool: "demo_probe" }).success,
    ).toBe(true);
    expect(
      pollOutput.safeParse({ ok: true, label: "x", callId: "c", state: "succeeded", tool: "demo_probe" }).success,
    ).toBe(false);
  });
});
