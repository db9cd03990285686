// URLBRIDGE_SANDBOX_* as config.ts parses them, turned into the sandbox containers' options and the health status.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../../server/config.js";
import { projectContainersOptionsFromConfig } from "../../../../server/sandbox/container/from-config.js";
import { containerSandboxStatus } from "../../../../server/sandbox/container/status.js";

describe("URLBRIDGE_SANDBOX_* in the configuration", () => {
  it("defaults to no network, no configured instance (the bridge fills in the state's own) and the manager's own image and limits", () => {
    const config = loadConfig({});
    expect(config.sandboxContainer).toEqual({
      image: undefined,
      network: "none",
      cpus: undefined,
      memoryMb: undefined,
      pids: undefined,
      tmpMb: undefined,
      hostProjects: undefined,
      instance: undefined,
    });
    const options = projectContainersOptionsFromConfig(config);
    expect(options).toMatchObject({ limits: {}, network: "none", agentFallback: { uid: 1000, gid: 1000 } });
    expect(options.image).toBeUndefined();
    expect(options.hostPath).toBeUndefined();
  });

  it("reads the image, network, limits in MiB and the host path mapping", () => {
    const config = loadConfig({
      URLBRIDGE_SANDBOX_IMAGE: "ghcr.io/me/toolchain:1",
      URLBRIDGE_SANDBOX_NETWORK: "bridge",
      URLBRIDGE_SANDBOX_CPUS: "1.5",
      URLBRIDGE_SANDBOX_MEMORY_MB: "2048",
      URLBRIDGE_SANDBOX_PIDS: "256",
      URLBRIDGE_SANDBOX_TMP_MB: "64",
      URLBRIDGE_SANDBOX_HOST_PROJECTS: "/projects=/home/me/code",
      URLBRIDGE_SANDBOX_INSTANCE: "box-2",
    });
    const options = projectContainersOptionsFromConfig(config);
    expect(options).toMatchObject({ image: "ghcr.io/me/toolchain:1", network: "bridge", instance: "box-2" });
    expect(options.limits).toEqual({ cpus: 1.5, memoryBytes: 2048 * 1024 ** 2, pids: 256, tmpBytes: 64 * 1024 ** 2 });
    expect(options.hostPath?.("/projects/app")).toBe("/home/me/code/app");
    expect(options.hostPath?.("/projects/demo/")).toBe("/home/me/code/demo");
    expect(options.hostPath?.("/projects")).toBe("/home/me/code");
    expect(() => options.hostPath?.("/projectsX/demo")).toThrow(/outside \/projects/);
    expect(() => options.hostPath?.("/elsewhere/app")).toThrow(
      expect.objectContaining({ code: "sandbox_unavailable" }),
    );
  });

  it.each([
    ["URLBRIDGE_SANDBOX_CPUS", "0"],
    ["URLBRIDGE_SANDBOX_MEMORY_MB", "1.5"],
    ["URLBRIDGE_SANDBOX_PIDS", "-1"],
    ["URLBRIDGE_SANDBOX_TMP_MB", "lots"],
    ["URLBRIDGE_SANDBOX_NETWORK", "host net"],
    ["URLBRIDGE_SANDBOX_INSTANCE", "../x"],
    ["URLBRIDGE_SANDBOX_HOST_PROJECTS", "/projects"],
    ["URLBRIDGE_SANDBOX_HOST_PROJECTS", "projects=/home/me/code"],
    ["URLBRIDGE_SANDBOX_HOST_PROJECTS", "/a=/b=/c"],
  ])("stops on a bad %s=%j and names it", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});

describe("the container mode's health status", () => {
  it("says what is enforced, and warns when sandboxes are given a network", () => {
    const closed = containerSandboxStatus(loadConfig({ URLBRIDGE_SANDBOX: "container" }));
    expect(closed).toMatchObject({
      mode: "container",
      filesystem: true,
      procProtection: true,
      signals: true,
      network: true,
      identitySeparation: true,
      perProjectIsolation: true,
    });
    expect(closed.container).toEqual({
      image: "node:20-bookworm-slim",
      network: "none",
      cpus: 1,
      memoryMb: 1024,
      pids: 512,
      tmpMb: 256,
      dockerSocketHeldByBridge: true,
    });
    expect(closed.warning).toBeUndefined();
    const open = containerSandboxStatus(
      loadConfig({ URLBRIDGE_SANDBOX: "container", URLBRIDGE_SANDBOX_NETWORK: "bridge" }),
    );
    expect(open).toMatchObject({ network: false, warning: expect.stringContaining("URLBRIDGE_SANDBOX_NETWORK") });
  });
});
