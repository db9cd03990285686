// A unique sandbox instance name per appliance by default (issue 28, item 8): two state directories (two
// appliances on one Docker engine) label their sandbox containers differently, and each keeps its own.
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../server/config.js";
import { openStore, type Store } from "../../../server/store/index.js";
import { sandboxInstanceOf } from "../../../server/store/sandbox-instance.js";
import { makeTempDir } from "../../helpers/bridge.js";

const open: Store[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

const storeAt = (dir: string) => {
  const store = openStore(dir);
  open.push(store);
  return store;
};

describe("sandbox instance name", () => {
  it("differs between two appliances and stays the same for one across restarts", () => {
    const configured = loadConfig({ URLBRIDGE_SANDBOX: "container" }).sandboxContainer.instance;
    expect(configured).toBeUndefined();
    const dirA = makeTempDir("instance-a");
    const a = sandboxInstanceOf(storeAt(dirA).settings, configured);
    const b = sandboxInstanceOf(storeAt(makeTempDir("instance-b")).settings, configured);
    expect(a).toMatch(/^ub-[0-9a-f]{10}$/);
    expect(b).toMatch(/^ub-[0-9a-f]{10}$/);
    expect(a).not.toBe(b);
    open.splice(0).forEach((s) => s.close());
    expect(sandboxInstanceOf(storeAt(dirA).settings, configured)).toBe(a);
    // The name passes the same check URLBRIDGE_SANDBOX_INSTANCE does.
    expect(loadConfig({ URLBRIDGE_SANDBOX_INSTANCE: a }).sandboxContainer.instance).toBe(a);
  });

  it("uses URLBRIDGE_SANDBOX_INSTANCE when the operator sets it", () => {
    const store = storeAt(makeTempDir("instance-configured"));
    expect(sandboxInstanceOf(store.settings, "box-2")).toBe("box-2");
  });
});
