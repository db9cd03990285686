// The agent-limits report of /api/health (server/sandbox/agent-limits.ts): what is enforced for each setting and
// mode, and the tmpfs test that decides whether the scratch folder counts toward the memory budget.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../server/config.js";
import { agentLimitsStatus, isOnTmpfs, tmpfsUsedBytes } from "../../../server/sandbox/agent-limits.js";

const MIB = 1024 * 1024;
const SHM = "/dev/shm";
const shmIsTmpfs = fs.existsSync(SHM) && fs.statfsSync(SHM).type === 0x01021994;

describe("agentLimitsStatus", () => {
  it.each([
    [{}, { budgetBytes: 1024 * MIB, enforcement: "watchdog" }, 1024 * MIB, 2048 * MIB],
    [{ URLBRIDGE_AGENT_MEMORY_MB: "0" }, { budgetBytes: 0, enforcement: "off" }, 1024 * MIB, 2048 * MIB],
    [
      { URLBRIDGE_AGENT_MAX_FILE_MB: "0", URLBRIDGE_SESSION_GROWTH_MB: "64" },
      { budgetBytes: 1024 * MIB, enforcement: "watchdog" },
      0,
      64 * MIB,
    ],
    [{ URLBRIDGE_SANDBOX: "container" }, { budgetBytes: 1024 * MIB, enforcement: "container" }, 0, 2048 * MIB],
  ])("reports %j as enforced", (env, memory, maxFileBytes, growthBudgetBytes) => {
    const status = agentLimitsStatus({
      config: loadConfig({ URLBRIDGE_SCRATCH_DIR: os.tmpdir(), ...env }),
      launcherApplies: true,
      bridgeOomScoreAdj: -900,
    });
    expect(status.memory).toMatchObject(memory);
    expect(status).toMatchObject({ maxFileBytes, growthBudgetBytes, oom: { bridge: -900, bridgeProtected: true } });
  });

  it("warns when the launcher cannot raise agents' oom_score_adj or the bridge is not below 0", () => {
    const status = agentLimitsStatus({
      config: loadConfig({ URLBRIDGE_SCRATCH_DIR: os.tmpdir() }),
      launcherApplies: false,
      bridgeOomScoreAdj: 0,
    });
    expect(status.oom).toEqual({ agents: null, bridge: 0, bridgeProtected: false });
    expect(status.maxFileBytes).toBe(0);
    expect(status.warning).toMatch(/npm run build:native/);
  });

  it("refuses a negative or fractional size", () => {
    expect(() => loadConfig({ URLBRIDGE_AGENT_MEMORY_MB: "-1" })).toThrow(/URLBRIDGE_AGENT_MEMORY_MB/);
    expect(() => loadConfig({ URLBRIDGE_SESSION_GROWTH_MB: "1.5" })).toThrow(/URLBRIDGE_SESSION_GROWTH_MB/);
  });
});

describe.skipIf(!shmIsTmpfs)("the scratch tmpfs", () => {
  it("counts a tmpfs folder (even one not made yet) and its used bytes grow with what is written", () => {
    const dir = fs.mkdtempSync(path.join(SHM, "agent-limits-"));
    try {
      expect(isOnTmpfs(path.join(dir, "not-yet"))).toBe(true);
      const before = tmpfsUsedBytes(dir);
      fs.writeFileSync(path.join(dir, "fill"), Buffer.alloc(8 * MIB, 1));
      expect(tmpfsUsedBytes(dir) - before).toBeGreaterThanOrEqual(7 * MIB);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("does not count a folder on a disk", () => {
    const disk = ["/var/tmp", process.cwd()].find((d) => fs.statfsSync(d).type !== 0x01021994);
    expect(disk, "a folder outside any tmpfs").toBeDefined();
    expect(isOnTmpfs(disk!)).toBe(false);
    expect(tmpfsUsedBytes(disk!)).toBe(0);
  });
});
