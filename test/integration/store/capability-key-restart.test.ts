// A restart reads the capability key it finds and writes nothing: before, every start wrote a temp file, fsynced it
// and failed to link it over the existing key (issue 34). Seen through inotify (fs.watch): a sentinel file written
// after the load is the last event, so every event the load caused came before it.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CAPABILITY_KEY_FILE, loadCapabilityKey } from "../../../server/store/capability-key.js";
import { makeTempDir } from "../../helpers/bridge.js";

/** The names fs.watch reports in `dir` while `act` runs, up to a sentinel file written after it. */
async function namesTouchedBy(dir: string, act: () => void): Promise<string[]> {
  const names: string[] = [];
  const sentinel = "sentinel";
  const watcher = fs.watch(dir);
  try {
    const seen = new Promise<void>((resolve) =>
      watcher.on("change", (_event, name) => {
        if (name === sentinel) resolve();
        else names.push(String(name));
      }),
    );
    act();
    fs.writeFileSync(path.join(dir, sentinel), "");
    await seen;
  } finally {
    watcher.close();
  }
  return names;
}

describe("the capability key across restarts", () => {
  it("is created durably on the first start and read, with nothing written, on the next", async () => {
    const stateDir = makeTempDir("capability-key-restart");
    let first: ReturnType<typeof loadCapabilityKey> | undefined;
    const created = await namesTouchedBy(stateDir, () => (first = loadCapabilityKey(stateDir)));
    expect(first?.created).toBe(true);
    expect(created).toContain(CAPABILITY_KEY_FILE);
    expect(created.some((name) => name.endsWith(".tmp"))).toBe(true);

    let again: ReturnType<typeof loadCapabilityKey> | undefined;
    const touched = await namesTouchedBy(stateDir, () => (again = loadCapabilityKey(stateDir)));
    expect(again?.created).toBe(false);
    expect(again?.key.equals(first!.key)).toBe(true);
    expect(touched.filter((name) => name !== CAPABILITY_KEY_FILE)).toEqual([]);
  });
});
