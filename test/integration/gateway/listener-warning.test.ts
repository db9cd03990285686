import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

describe("many calls in flight at once", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge();
    for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(t.projectDir, `f${i}.txt`), `needle ${i}\n`.repeat(200));
    s = await t.session();
  });
  afterAll(async () => t.close());

  it("print no MaxListenersExceededWarning: every call listens on the shutdown signal and removes its listener", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    try {
      const calls = Array.from({ length: 40 }, (_, i) =>
        agentGet<{ ok: boolean }>(`${s.r}/g?path=.&raw=needle+${i % 20}`),
      );
      const bodies = await Promise.all(calls);
      expect(bodies.every((b) => b.ok)).toBe(true);
      // Node emits the warning on the next tick after the 11th listener is added.
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.filter((w) => w.includes("MaxListeners"))).toEqual([]);
  });
});
