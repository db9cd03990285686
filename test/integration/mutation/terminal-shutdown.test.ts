// A graceful stop while commands run or wait for the gate: the running tree is ended, both intents are recorded
// `interrupted` (started or not), and after a restart on the same state their records replay without re-running.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isGone } from "../../../server/mutation/terminal/process-tree.js";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import { agentGet, startTestBridge, type TestBridge } from "../../helpers/bridge.js";
import { waitUntil, type Body } from "./terminal-helpers.js";

const bridges: TestBridge[] = [];
afterAll(async () => {
  for (const t of bridges) await t.close();
});

describe("terminal intents across a graceful restart", () => {
  it("ends running commands, fails queued ones as never started, and replays both after restart", async () => {
    const t = await startTestBridge();
    bridges.push(t);
    const s = await t.session({ terminal: true });
    const hold = (n: number) =>
      `${s.m}/x?wait=0&raw=${encodeUrlText(`echo $$ > holder-${n}.pid; echo ran >> holder-${n}.log; sleep 300`)}`;
    const queuedUrl = `${s.m}/x?wait=0&raw=${encodeUrlText("echo ran >> queued.log")}`;

    await agentGet<Body>(hold(1));
    await agentGet<Body>(hold(2));
    expect(await waitUntil(() => t.bridge.terminal.gate.snapshot().running === 2)).toBe(true);
    await agentGet<Body>(queuedUrl);
    expect(await waitUntil(() => t.bridge.terminal.gate.snapshot().queued === 1)).toBe(true);
    expect(
      await waitUntil(
        () =>
          fs.existsSync(path.join(t.projectDir, "holder-1.pid")) &&
          fs.existsSync(path.join(t.projectDir, "holder-2.pid")),
      ),
    ).toBe(true);
    const pids = [1, 2].map((n) => Number(fs.readFileSync(path.join(t.projectDir, `holder-${n}.pid`), "utf8")));

    await t.close();
    for (const pid of pids) expect(await waitUntil(() => isGone(pid))).toBe(true);
    expect(t.bridge.terminal.gate.snapshot()).toMatchObject({ running: 0, queued: 0 });

    const again = await startTestBridge({}, { stateDir: t.stateDir });
    bridges.push(again);
    // Same state, same capabilities; only the port (and so the origin) is new.
    const moved = (url: string) => url.replace(t.bridge.dataUrl, again.bridge.dataUrl);
    const holder = await agentGet<Body>(moved(hold(1)));
    expect(holder).toMatchObject({
      ok: false,
      dedupe: "replayed",
      errorCode: "interrupted",
      errorDetail: { started: true },
    });
    const queued = await agentGet<Body>(moved(queuedUrl));
    expect(queued).toMatchObject({
      ok: false,
      dedupe: "replayed",
      errorCode: "interrupted",
      errorDetail: { phase: "pending", started: false },
    });
    expect(typeof queued.retry).toBe("string");
    expect(fs.readFileSync(path.join(t.projectDir, "holder-1.log"), "utf8")).toBe("ran\n");
    expect(fs.existsSync(path.join(t.projectDir, "queued.log"))).toBe(false);
  });
});
