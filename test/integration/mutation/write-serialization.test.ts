import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RENAME_DELAY_ENV } from "../../../server/mutation/journal/test-hooks.js";
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

describe("write-queue lanes (issue 34)", () => {
  let t: TestBridge;
  beforeAll(async () => {
    // Each write or edit holds its rename (inside the queue) until its temp file and record are durable and this
    // delay has passed: long enough to see where the other edit stands meanwhile.
    process.env[RENAME_DELAY_ENV] = "1500";
    t = await startTestBridge();
    delete process.env[RENAME_DELAY_ENV];
  });
  afterAll(async () => t.close());

  it("lets an edit of another file of the project stage its temp file while the first holds its rename", async () => {
    writeAsAgent(path.join(t.projectDir, "a.txt"), "alpha\n");
    writeAsAgent(path.join(t.projectDir, "b.txt"), "beta\n");
    const s = await t.session({ write: true });
    const edit = (file: string, from: string, to: string) =>
      agentGet<{ ok: boolean }>(
        url(
          s.m!,
          "e",
          [
            ["path", file],
            ["old", from],
            ["wait", 20_000],
          ],
          to,
        ),
      );
    const first = edit("a.txt", "alpha", "ALPHA");
    const second = edit("b.txt", "beta", "BETA");
    // Seen on disk, not timed: b.txt's temp file beside a.txt's old content means b's edit ran while a's held its turn.
    let overlapped = false;
    let aDone = false;
    void first.then(() => (aDone = true));
    while (!aDone && !overlapped) {
      const names = fs.readdirSync(t.projectDir);
      const aOld = fs.readFileSync(path.join(t.projectDir, "a.txt"), "utf8") === "alpha\n";
      overlapped = aOld && names.some((n) => n.startsWith(".b.txt."));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await first).toMatchObject({ ok: true, line: 1 });
    expect(await second).toMatchObject({ ok: true, line: 1 });
    expect(overlapped).toBe(true);
    expect(fs.readFileSync(path.join(t.projectDir, "a.txt"), "utf8")).toBe("ALPHA\n");
    expect(fs.readFileSync(path.join(t.projectDir, "b.txt"), "utf8")).toBe("BETA\n");
  });
});
