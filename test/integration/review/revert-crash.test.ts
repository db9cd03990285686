// Runs the real server as a child process, SIGKILLs it in the middle of a 50-file revert (its commit held open by
// the test-only URLBRIDGE_TEST_PATCH_WRITE_DELAY_MS hook, which a revert shares with apply_patch), restarts it
// and checks that the tree is as before the revert, whole: all files or none.
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { PATCH_WRITE_DELAY_ENV } from "../../../server/mutation/journal/test-hooks.js";
import { TEMP_SUFFIX } from "../../../server/sandbox/fd-ops.js";
import { agentGet, giveToAgent, makeTempDir } from "../../helpers/bridge.js";
import { controlApi as api, killServerProcesses, startServerProcess } from "../../helpers/server-process.js";
import { patchText, snapshotTree, url, writeFiles } from "../mutation/fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; callId?: string; state?: string };

afterEach(killServerProcesses);

describe("revert crash recovery", () => {
  it(
    "rolls a 50-file revert killed mid-commit back to the tree before the revert, then reverts once on retry",
    { timeout: 120_000 },
    async () => {
      const stateDir = makeTempDir("revert-crash-state");
      const root = makeTempDir("revert-crash-project");
      const files: Record<string, string> = {};
      for (let i = 0; i < 50; i++) files[`src/f${i}.txt`] = `v${i}\r\n`;
      writeFiles(root, files);
      giveToAgent(root); // file tools decide as the agent's identity (issue 27)
      const original = snapshotTree(root);

      const first = await startServerProcess({ stateDir, env: { [PATCH_WRITE_DELAY_ENV]: "60" } });
      const project = await api<{ id: string }>(first, "POST", "/api/projects", {
        name: "revert-crash",
        root,
        permissions: { write: true, terminal: false },
      });
      const session = await api<{ initUrl: string }>(first, "POST", "/api/sessions", { projectId: project.id });
      const m = (await agentGet<{ bases: { m: string } }>(session.initUrl)).bases.m;
      const patch = patchText(
        ...Object.keys(files).flatMap((p, i) => [`*** Update File: ${p}`, "@@", `-v${i}`, `+w${i}`]),
      );
      const patched = await agentGet<Body>(url(m, "a", [["wait", 20_000]], patch));
      expect(patched).toMatchObject({ ok: true, state: "succeeded" });
      const patchedTree = snapshotTree(root);

      const revertUrl = url(m, "n", [
        ["intent", patched.callId!],
        ["wait", 0],
      ]);
      const accepted = await agentGet<Body>(revertUrl);
      expect(accepted).toMatchObject({ ok: true, agentAction: "poll" });
      const restoredCount = () =>
        Object.entries(snapshotTree(root)).filter(
          ([p, e]) => !p.includes(TEMP_SUFFIX) && JSON.stringify(patchedTree[p]) !== JSON.stringify(e),
        ).length;
      while (restoredCount() < 10) await sleep(10);
      first.child.kill("SIGKILL");
      await first.exited;
      const atKill = restoredCount();
      expect(atKill).toBeGreaterThanOrEqual(10);
      expect(atKill).toBeLessThan(50);

      // None: the restart rolls the revert back to the tree it started from.
      const second = await startServerProcess({ stateDir });
      expect(snapshotTree(root)).toEqual(patchedTree);
      const rebase = (u: string) => u.replace(first.dataUrl, second.dataUrl);
      const replayed = await agentGet<Body>(rebase(revertUrl));
      expect(replayed).toMatchObject({
        ok: false,
        errorCode: "interrupted_rolled_back",
        dedupe: "replayed",
        callId: accepted.callId,
      });
      expect(snapshotTree(root)).toEqual(patchedTree);

      // All: its retry reverts every file, once.
      let retried = await agentGet<Body>(replayed.retry as string);
      while (retried.state === "pending" || retried.state === "running")
        retried = await agentGet<Body>((retried.poll as string) ?? "");
      expect(retried).toMatchObject({ ok: true, state: "succeeded", summary: expect.stringContaining("50 file(s)") });
      expect(snapshotTree(root)).toEqual(original);

      second.child.kill("SIGTERM");
      await second.exited;
    },
  );
});
