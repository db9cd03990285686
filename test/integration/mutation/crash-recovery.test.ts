// Runs the real server as a child process, SIGKILLs it in the middle of a 200-file apply_patch commit (held
// open by the test-only URLBRIDGE_TEST_PATCH_WRITE_DELAY_MS hook), restarts it and checks the rollback.
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { PATCH_WRITE_DELAY_ENV } from "../../../server/mutation/journal/test-hooks.js";
import { TEMP_SUFFIX } from "../../../server/sandbox/fd-ops.js";
import { agentGet, makeTempDir, makeProjectDir } from "../../helpers/bridge.js";
import { controlApi as api, killServerProcesses, startServerProcess } from "../../helpers/server-process.js";
import { patchText, snapshotTree, url, writeFiles } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; callId?: string; state?: string };

afterEach(killServerProcesses);

describe("crash recovery", () => {
  it(
    "rolls a 200-file apply_patch killed mid-commit back to the exact pre-image and reports interrupted_rolled_back",
    { timeout: 120_000 },
    async () => {
      const stateDir = makeTempDir("crash-state");
      const root = makeProjectDir("crash-project");
      const files: Record<string, string> = {};
      for (let i = 0; i < 200; i++)
        files[`src/m${Math.floor(i / 50)}/file${i}.txt`] = `header ${i}\r\nvalue = ${i}\r\nfooter\r\n`;
      writeFiles(root, files);
      fs.chmodSync(path.join(root, "src/m0/file7.txt"), 0o755);
      const before = snapshotTree(root);

      // Updates of 190 files, 5 deletions and 5 additions in a new directory: 200 operations.
      const names = Object.keys(files);
      const ops = [
        ...names
          .slice(0, 190)
          .flatMap((p, i) => [`*** Update File: ${p}`, "@@", ` header ${i}`, `-value = ${i}`, `+value = ${i * 10}`]),
        ...names.slice(190, 195).map((p) => `*** Delete File: ${p}`),
        ...Array.from({ length: 5 }, (_, k) => [`*** Add File: generated/deep/new${k}.txt`, `+generated ${k}`]).flat(),
      ];
      const patch = patchText(...ops);

      const first = await startServerProcess({ stateDir, env: { [PATCH_WRITE_DELAY_ENV]: "40" } });
      const project = await api<{ id: string }>(first, "POST", "/api/projects", {
        name: "crash",
        root,
        permissions: { write: true, terminal: false },
      });
      const session = await api<{ initUrl: string }>(first, "POST", "/api/sessions", { projectId: project.id });
      const m = (await agentGet<{ bases: { m: string } }>(session.initUrl)).bases.m;
      const chunks = patch.match(/[\s\S]{1,1000}/g)!;
      for (const [i, chunk] of chunks.entries()) {
        expect(
          await agentGet<Body>(
            url(
              m,
              "s",
              [
                ["blob", "crash"],
                ["i", i],
                ["count", chunks.length],
              ],
              chunk,
            ),
          ),
        ).toMatchObject({ ok: true });
      }
      const applyUrl = url(m, "a", [
        ["blob", "crash"],
        ["count", chunks.length],
        ["wait", 0],
      ]);
      const accepted = await agentGet<Body>(applyUrl);
      expect(accepted).toMatchObject({ ok: true, agentAction: "poll" });

      // Wait until the commit is well under way, then kill the process without warning.
      // Real files only: a temp file mid-write is counted, then vanishes into its target's rename, so counting it
      // would let the figure fall between the wait and the kill.
      const changedCount = () =>
        Object.entries(snapshotTree(root)).filter(
          ([p, e]) => !p.includes(TEMP_SUFFIX) && JSON.stringify(before[p]) !== JSON.stringify(e),
        ).length;
      while (changedCount() < 40) await sleep(20);
      first.child.kill("SIGKILL");
      await first.exited;
      const changedAtKill = changedCount();
      expect(changedAtKill).toBeGreaterThanOrEqual(40);
      expect(changedAtKill).toBeLessThan(200);

      const second = await startServerProcess({ stateDir });
      expect(snapshotTree(root)).toEqual(before);

      const rebase = (u: string) => u.replace(first.dataUrl, second.dataUrl);
      const polled = await agentGet<Body>(rebase(url(m, "j", [["call", accepted.callId!]])));
      expect(polled).toMatchObject({
        ok: false,
        state: "failed",
        errorCode: "interrupted_rolled_back",
        retryable: true,
        tool: "apply_patch",
      });

      // The hidden retry of the original GET gets the record (never a second execution), plus a retry URL.
      const replayed = await agentGet<Body>(rebase(applyUrl));
      expect(replayed).toMatchObject({
        ok: false,
        errorCode: "interrupted_rolled_back",
        dedupe: "replayed",
        callId: accepted.callId,
      });
      expect(snapshotTree(root)).toEqual(before);

      // The retry keeps the caller's wait=0, so it answers at once; its poll URL gives the outcome.
      let retried = await agentGet<Body>(replayed.retry as string);
      while (retried.state === "pending" || retried.state === "running")
        retried = await agentGet<Body>((retried.poll as string) ?? "");
      expect(retried).toMatchObject({
        ok: true,
        state: "succeeded",
        summary: "200 files: 5 added, 190 updated, 5 deleted; +195 -205 lines",
      });
      expect(fs.readFileSync(path.join(root, "src/m0/file7.txt"), "utf8")).toBe("header 7\r\nvalue = 70\r\nfooter\r\n");
      expect(fs.statSync(path.join(root, "src/m0/file7.txt")).mode & 0o777).toBe(0o755);

      second.child.kill("SIGTERM");
      await second.exited;
    },
  );
});
