// Start-up probes the launcher without blocking (probeLauncherInBackground) and later calls read it from the
// cache: both must see what `urlbridge-sandbox --probe` prints, as the blocking probe did. Nothing else in this
// file probes first, so the background probe is the one that runs.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { launcherBinary, probeLauncher, probeLauncherInBackground } from "../../../server/sandbox/launcher.js";

describe("the launcher probe in the background", () => {
  it("resolves with the launcher's own answer, which the blocking probe then returns from the cache", async () => {
    const binary = launcherBinary();
    expect(binary, "the launcher is built by the test global setup").toBeDefined();
    const direct = JSON.parse(execFileSync(binary!, ["--probe"], { encoding: "utf8" })) as unknown;
    const pending = probeLauncherInBackground();
    const background = await pending;
    expect(background).toEqual(direct);
    expect(probeLauncher()).toBe(background);
    await expect(probeLauncherInBackground()).resolves.toBe(background);
  });
});
