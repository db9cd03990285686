import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineTool } from "../../../server/kernel/tool/definition.js";
import { createLogger } from "../../../server/log.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

// Test-only tools that fail the way a bug would: a plain Error, thrown synchronously or from a promise.
const brokenTools = [
  defineTool({
    id: "broken_sync",
    route: "bs",
    longRoutes: [],
    capability: "read",
    description: "Test-only: throws synchronously.",
    example: "/bs",
    schema: z.object({}),
    output: z.strictObject({ ok: z.literal(true) }),
    url: {},
    execute() {
      throw new Error("secret detail /host/path");
    },
  }),
  defineTool({
    id: "broken_async",
    route: "ba",
    longRoutes: [],
    capability: "read",
    description: "Test-only: rejects.",
    example: "/ba",
    schema: z.object({}),
    output: z.strictObject({ ok: z.literal(true) }),
    url: {},
    async execute() {
      await Promise.resolve();
      throw new Error("secret detail /host/path");
    },
  }),
];

describe("unexpected failures on the data plane", () => {
  let t: TestBridge;
  let s: AgentSession;
  const logged: string[] = [];

  beforeAll(async () => {
    t = await startTestBridge({}, { extraTools: brokenTools, log: createLogger("error", (line) => logged.push(line)) });
    s = await t.session();
  });
  afterAll(async () => t.close());

  it.each(["bs", "ba"])(
    "answers a tool's bug on /%s as a retryable internal_error, logged for the operator only",
    async (route) => {
      logged.length = 0;
      const res = await fetch(`${s.r}/${route}`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({
        ok: false,
        errorCode: "internal_error",
        retryable: true,
        agentAction: "wait_and_retry",
      });
      expect(text).not.toMatch(/secret detail|\/host\/path|at .*\.ts:\d+/);
      expect(logged.join("")).toMatch(/secret detail/);
      // The bridge goes on serving.
      expect(await agentGet(`${s.r}/t?path=.`)).toMatchObject({ ok: true, kind: "dir" });
    },
  );

  it("answers a gateway failure outside any tool (a closed store) with a 500 JSON internal_error and no stack", async () => {
    const initUrl = s.initUrl;
    logged.length = 0;
    t.bridge.store.close();
    const res = await fetch(initUrl);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ ok: false, errorCode: "internal_error", retryable: true });
    expect(text).not.toMatch(/at .*\.(ts|js):\d+/);
    expect(logged.join("")).toMatch(/data plane request failed/);
  });
});
