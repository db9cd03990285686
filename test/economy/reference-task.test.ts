// Issue 14's economy bound: the reference task (read both files of a two-file bug, fix both, run the tests,
// read the result) completes in <= 3 GETs after Init and <= 12 KiB, for every way an agent's URLs reach us.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { giveToAgent, makeTempDir, startTestBridge, type TestBridge } from "../helpers/bridge.js";
import {
  playReferenceTask,
  referenceProjectFixed,
  TASK_BYTES_BOUND,
  TASK_GET_BOUND,
  TASK_VARIANTS,
  writeReferenceProject,
} from "./reference-task.js";

describe("the reference task (issue 14)", () => {
  let t: TestBridge;
  beforeAll(async () => {
    t = await startTestBridge();
  });
  afterAll(async () => t.close());

  it.each(TASK_VARIANTS.map((v) => [v.name, v] as const))(
    "%s: fixed, tested and read back within the bounds",
    async (_name, variant) => {
      const root = makeTempDir(`task-${variant.name.replace(/\W+/g, "-")}`);
      writeReferenceProject(root);
      giveToAgent(root);
      const s = await t.session({
        root,
        write: true,
        terminal: true,
        name: `task-${variant.name.replace(/\W+/g, "-")}`,
      });
      const run = await playReferenceTask({ r: s.r, m: s.m! }, variant);
      for (const g of run.gets)
        expect(g.body, `${g.route}: ${JSON.stringify(g.body).slice(0, 400)}`).toMatchObject({ ok: true });
      expect(referenceProjectFixed(root)).toBe(true);
      expect(run.exitCode).toBe(0);
      expect(run.output).toMatch(/Ran 2 tests[\s\S]*OK/);
      expect(run.gets.length).toBeLessThanOrEqual(TASK_GET_BOUND);
      expect(run.totalBytes).toBeLessThanOrEqual(TASK_BYTES_BOUND);
      console.log(
        `reference task, ${variant.name}: ${run.gets.length} GETs, ${run.totalBytes} bytes (${run.gets.map((g) => `${g.route} ${g.bytes}`).join(", ")})`,
      );
    },
  );
});
