import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url } from "../mutation/fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string };
interface Health {
  ok: boolean;
  degraded: boolean;
  store: {
    activityLog: { failing: boolean; pending: number; lastError: { code: string } | null };
    journal: { failing: boolean; lastError: { code: string } | null };
  };
}

/** Big enough for a fresh state file and its WAL, small enough to fill in a moment. */
const TMPFS_SIZE = "8m";
const FILL_CHUNK = 64 * 1024;
const POLL_MS = 100;
const POLL_TRIES = 150;
const READS_DURING_FILL = 40;

/** Mounts a small tmpfs for the state dir; where mounting is not permitted (not root, EPERM), says why instead. */
function mountSmallTmpfs(): { dir: string } | { reason: string } {
  if (process.platform !== "linux") return { reason: "tmpfs mounts need Linux" };
  if (process.getuid?.() !== 0) return { reason: "mounting a tmpfs needs root (CI runs as root and runs this)" };
  const dir = makeTempDir("tmpfs-state");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${TMPFS_SIZE},mode=0700`, "tmpfs", dir], { stdio: "pipe" });
    return { dir };
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return { reason: `mount -t tmpfs was refused here (${stderr || (error as Error).message})` };
  }
}

const mount = mountSmallTmpfs();

describe.runIf("dir" in mount)("the state directory's disk fills up during traffic", () => {
  const mountDir = "dir" in mount ? mount.dir : "";
  const filler = path.join(mountDir, "filler");
  let t: TestBridge | undefined;
  let s: AgentSession;
  const health = async () => (await t!.api<Health>("GET", "/api/health")).body;
  async function healthUntil(want: (h: Health) => boolean): Promise<Health> {
    let last = await health();
    for (let i = 0; i < POLL_TRIES && !want(last); i++) {
      await sleep(POLL_MS);
      last = await health();
    }
    return last;
  }

  beforeAll(async () => {
    t = await startTestBridge({}, { stateDir: path.join(mountDir, "state") });
    s = await t.session({ write: true });
    fs.writeFileSync(path.join(t.projectDir, "seen.txt"), "seen\n");
  });
  afterAll(async () => {
    await t?.close();
    // Always unmount, also when the bridge failed to start or a test failed.
    execFileSync("umount", ["-l", mountDir], { stdio: "pipe" });
  });

  it("keeps reads and the control plane answering, refuses mutations retryably without running them, and recovers once space is freed", async () => {
    const bridge = t!;
    const read = url(s.r, "r", [["path", "seen.txt"]]);
    // Reads keep arriving while the disk fills.
    const traffic = (async () => {
      const answers: Body[] = [];
      for (let i = 0; i < READS_DURING_FILL; i++) {
        answers.push(await agentGet<Body>(read));
        await sleep(10);
      }
      return answers;
    })();
    await sleep(50);
    fillDisk(filler);
    const answered = await traffic;
    expect(answered.every((a) => a.ok)).toBe(true);

    const write = url(s.m!, "w", [["path", "full.txt"]], "written once\n");
    const refused = await agentGet<Body>(write);
    expect(refused).toMatchObject({
      ok: false,
      errorCode: "state_store_unavailable",
      retryable: true,
      agentAction: "wait_and_retry",
      errorDetail: { store: "SQLITE_FULL" },
    });
    expect(fs.existsSync(path.join(bridge.projectDir, "full.txt"))).toBe(false);
    expect(await agentGet<Body>(read)).toMatchObject({ ok: true });
    expect((await bridge.api("GET", "/api/sessions")).status).toBe(200);
    const during = await healthUntil((h) => h.store.activityLog.failing);
    expect(during).toMatchObject({
      ok: true,
      degraded: true,
      store: {
        activityLog: { failing: true, lastError: { code: "SQLITE_FULL" } },
        journal: { failing: true, lastError: { code: "SQLITE_FULL" } },
      },
    });

    fs.rmSync(filler);
    // Recovered, and the activity rows buffered meanwhile written (they wait up to the 50 ms flush delay).
    const after = await healthUntil((h) => !h.degraded && h.store.activityLog.pending === 0);
    expect(after).toMatchObject({
      ok: true,
      degraded: false,
      store: { activityLog: { failing: false, pending: 0 }, journal: { failing: false } },
    });
    expect(await agentGet<Body>(write)).toMatchObject({ ok: true, created: true });
    expect(await agentGet<Body>(write)).toMatchObject({ ok: true, dedupe: "replayed" });
    expect(fs.readFileSync(path.join(bridge.projectDir, "full.txt"), "utf8")).toBe("written once\n");
  });
});

describe.runIf("reason" in mount)("the state directory's disk fills up during traffic (not run)", () => {
  it.skip(`skipped: ${"reason" in mount ? mount.reason : ""}`, () => {});
});

/** Writes a file until the file system says ENOSPC, down to its last bytes (bounded: the tmpfs is 8 MiB). */
function fillDisk(file: string): void {
  const fd = fs.openSync(file, "w");
  try {
    for (const size of [FILL_CHUNK, 512, 1]) {
      const chunk = Buffer.alloc(size, 0x61);
      for (let i = 0; i < 4096; i++) {
        try {
          fs.writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
          break;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}
