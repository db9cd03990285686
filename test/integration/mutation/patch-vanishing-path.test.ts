import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PATCH_WRITE_DELAY_ENV } from "../../../server/mutation/journal/test-hooks.js";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { patchText, snapshotTree, url, writeFiles } from "./fixtures.js";

type Body = Record<string, unknown> & {
  ok: boolean;
  errorCode?: string;
  errorDetail?: Record<string, unknown>;
  state?: string;
};

/** The commit pauses this long after each file (test hook), long enough to remove a later file in between. */
const WRITE_DELAY_MS = 400;
const POLL_TRIES = 200;

describe("apply_patch when a path vanishes mid-commit", () => {
  let t: TestBridge;
  let s: AgentSession;
  let root: string;

  beforeAll(async () => {
    process.env[PATCH_WRITE_DELAY_ENV] = String(WRITE_DELAY_MS);
    t = await startTestBridge();
    delete process.env[PATCH_WRITE_DELAY_ENV];
  });
  beforeEach(async () => {
    root = makeTempDir("vanish");
    s = await t.session({ write: true, root, name: `p-${path.basename(root)}` });
  });
  afterEach(async () => {
    await t.api("POST", `/api/sessions/${s.sessionId}/disable`);
  });
  afterAll(async () => t.close());

  /** Starts the patch, waits until its first file is written, runs `vanish`, and returns the patch's answer. */
  async function patchWhile(vanish: () => void, ...lines: string[]): Promise<Body> {
    const answer = agentGet<Body>(url(s.m!, "a", [["wait", 1500]], patchText(...lines)));
    for (let i = 0; i < POLL_TRIES && fs.readFileSync(path.join(root, "first.txt"), "utf8") !== "one\n"; i++)
      await sleep(5);
    vanish();
    let body = await answer;
    for (let i = 0; i < POLL_TRIES && body.state === "running"; i++) body = await agentGet<Body>(body.poll as string);
    return body;
  }

  it.each([
    ["an updated file", ["*** Update File: later.txt", "@@", "-old", "+new"], "later.txt", "later.txt"],
    ["a deleted file", ["*** Delete File: later.txt"], "later.txt", "later.txt"],
    [
      "a moved file's source",
      ["*** Update File: later.txt", "*** Move to: moved.txt", "@@", "-old", "+new"],
      "later.txt",
      "moved.txt",
    ],
    ["an updated file's folder", ["*** Update File: dir/later.txt", "@@", "-old", "+new"], "dir", "dir/later.txt"],
  ])("answers path_not_found for %s and rolls the patch back", async (_label, later, removed, failedAt) => {
    writeFiles(root, { "first.txt": "zero\n", "later.txt": "old\n", "dir/later.txt": "old\n" });
    const before = snapshotTree(root);
    const body = await patchWhile(
      () => fs.rmSync(path.join(root, removed), { recursive: true }),
      "*** Update File: first.txt",
      "@@",
      "-zero",
      "+one",
      ...later,
    );
    expect(body).toMatchObject({
      ok: false,
      errorCode: "path_not_found",
      errorDetail: { failedAt: `/project/${failedAt}`, rolledBack: true, appliedBeforeFailure: 1 },
    });
    expect(String(body.errorDetail?.missing)).toMatch(new RegExp(`^/project/${removed}`));
    // The rollback restores every preimage of the patch, the removed path's included: the tree is as before it.
    expect(snapshotTree(root)).toEqual(before);
  });
});
