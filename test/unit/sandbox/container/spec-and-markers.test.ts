import { describe, expect, it } from "vitest";
import { createMarkerFilter } from "../../../../server/sandbox/container/exec.js";
import {
  containerCreateOptions,
  containerName,
  DEFAULT_SANDBOX_LIMITS,
  rootKey,
  specHash,
  type SandboxSpec,
} from "../../../../server/sandbox/container/spec.js";

const spec: SandboxSpec = {
  projectId: "p/1 x",
  root: "/projects/demo",
  hostRoot: "/srv/projects/demo",
  identity: { uid: 1000, gid: 1000 },
  image: "node:20-bookworm-slim",
  network: "none",
  limits: DEFAULT_SANDBOX_LIMITS,
  instance: "default",
};

describe("containerCreateOptions", () => {
  it("mounts only the root at /project, as the agent, without network, capabilities or privilege gain", () => {
    const options = containerCreateOptions(spec);
    expect(options).toMatchObject({
      User: "1000:1000",
      NetworkDisabled: true,
      Labels: { "urlbridge.project": "p/1 x", "urlbridge.root": "/projects/demo", "urlbridge.spec": specHash(spec) },
    });
    expect(options.HostConfig).toMatchObject({
      Binds: ["/srv/projects/demo:/project:rw"],
      NetworkMode: "none",
      Init: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      ReadonlyRootfs: true,
      PidsLimit: DEFAULT_SANDBOX_LIMITS.pids,
      Memory: DEFAULT_SANDBOX_LIMITS.memoryBytes,
      MemorySwap: DEFAULT_SANDBOX_LIMITS.memoryBytes,
    });
    expect(containerName(spec)).toBe(`urlbridge-default-p-1-x-${rootKey("/projects/demo")}`);
    // One container per root (issue 31): a worktree of the same project has a name, and a container, of its own.
    expect(containerName({ ...spec, root: "/projects/demo.worktrees/a" })).not.toBe(containerName(spec));
  });

  it("mounts a linked worktree's main repository metadata read-only where its .git file names it (issue 31)", () => {
    const worktree = {
      ...spec,
      hostRoot: "/srv/projects/demo.worktrees/fix",
      readOnlyMounts: { "/projects/demo/.git": "/srv/projects/demo/.git" },
    };
    expect(containerCreateOptions(worktree).HostConfig!.Binds).toEqual([
      "/srv/projects/demo.worktrees/fix:/project:rw",
      "/srv/projects/demo/.git:/projects/demo/.git:ro",
    ]);
  });

  it("an allowed network is used as given", () => {
    expect(containerCreateOptions({ ...spec, network: "bridge" })).toMatchObject({
      NetworkDisabled: false,
      HostConfig: { NetworkMode: "bridge" },
    });
  });

  it.each([
    ["image", { image: "debian:bookworm-slim" }],
    ["root", { hostRoot: "/srv/projects/other" }],
    ["identity", { identity: { uid: 1001, gid: 1001 } }],
    ["network", { network: "bridge" }],
    ["limits", { limits: { ...DEFAULT_SANDBOX_LIMITS, pids: 64 } }],
    ["read-only mounts", { readOnlyMounts: { "/projects/demo/.git": "/srv/projects/demo/.git" } }],
  ])("the spec hash changes with the %s", (_what, change) => {
    expect(specHash({ ...spec, ...change })).not.toBe(specHash(spec));
  });
});

describe("createMarkerFilter", () => {
  const nonce = "0123abcd";
  const marker = (kind: string, value: string) => `\x1eurlbridge-${nonce} ${kind} ${value}\n`;

  it.each([
    ["whole", [`out${marker("pid", "42")}more${marker("exit", "3")}`]],
    ["split inside the marker", [`out\x1eurlbr`, `idge-${nonce} pid 42\nmo`, `re\x1eurlbridge-${nonce} exit 3`, "\n"]],
    ["one byte at a time", [...`out${marker("pid", "42")}more${marker("exit", "3")}`]],
  ])("strips markers (%s) and passes the rest on", (_how, chunks) => {
    const output: string[] = [];
    const markers: string[] = [];
    const filter = createMarkerFilter(
      nonce,
      (c) => output.push(c.toString("latin1")),
      (kind, value) => markers.push(`${kind}=${value}`),
    );
    for (const chunk of chunks) filter.write(Buffer.from(chunk, "latin1"));
    filter.flush();
    expect(output.join("")).toBe("outmore");
    expect(markers).toEqual(["pid=42", "exit=3"]);
  });

  it("passes on look-alikes with another nonce and a lone record separator", () => {
    const output: string[] = [];
    const markers: string[] = [];
    const filter = createMarkerFilter(
      nonce,
      (c) => output.push(c.toString("latin1")),
      (kind) => markers.push(kind),
    );
    const text = `a\x1eb \x1eurlbridge-ffffffff exit 0\nc\x1e`;
    filter.write(Buffer.from(text, "latin1"));
    filter.flush();
    expect(output.join("")).toBe(text);
    expect(markers).toEqual([]);
  });
});
