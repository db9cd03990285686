import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

describe("per-project write queue", () => {
  let t: TestBridge;
  beforeAll(async () => {
    t = await startTestBridge();
  });
  afterAll(async () => t.close());

  it("loses no update when two sessions of one project edit the same file concurrently", async () => {
    const slots = 40;
    const file = path.join(t.projectDir, "shared.txt");
    writeAsAgent(file, Array.from({ length: slots }, (_, i) => `slot ${i};`).join("\n") + "\n");
    const a = await t.session({ write: true, name: "a" });
    const b = await t.session({ write: true, name: "b", root: t.projectDir });
    // Each edit reads the file, replaces its own slot and writes the whole file back: without one queue
    // per project, interleaved read-modify-write cycles would overwrite each other's slots.
    const bodies = await Promise.all(
      Array.from({ length: slots }, (_, i) =>
        agentGet<{ ok: boolean }>(
          url(
            (i % 2 === 0 ? a : b).m!,
            "e",
            [
              ["path", "shared.txt"],
              ["old", `slot ${i};`],
            ],
            `done ${i};`,
          ),
        ),
      ),
    );
    expect(bodies.every((body) => body.ok)).toBe(true);
    expect(fs.readFileSync(file, "utf8")).toBe(Array.from({ length: slots }, (_, i) => `done ${i};`).join("\n") + "\n");
  });
});
