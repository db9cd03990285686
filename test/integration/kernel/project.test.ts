import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateExecutable } from "../../../server/kernel/read/executables.js";
import { agentLookupOf, KNOWN_EXECUTABLES } from "../../../server/kernel/read/project.js";
import {
  agentGet,
  giveToAgent,
  makeTempDir,
  startTestBridge,
  TEST_AGENT_UID,
  type TestBridge,
} from "../../helpers/bridge.js";
import { writeTree } from "./fixtures.js";

type Body = Record<string, unknown> & {
  executables: Record<string, string>;
  markers: Array<{ name: string; kind: string }>;
  packageJson?: Record<string, unknown>;
};

describe("project (/p)", () => {
  let t: TestBridge;

  beforeAll(async () => {
    t = await startTestBridge();
  });
  afterAll(async () => t.close());

  it("reports executables on PATH, root markers, scripts and the package manager", async () => {
    writeTree(t.projectDir, {
      "package.json": JSON.stringify({
        name: "demo",
        version: "1.2.3",
        type: "module",
        scripts: { test: "vitest run", build: "tsc -p .", long: "x".repeat(400), bad: 42 },
      }),
      "pnpm-lock.yaml": "lockfileVersion: 9\n",
      "tsconfig.json": "{}",
      Makefile: "all:\n",
      "src/index.ts": "",
    });
    fs.mkdirSync(path.join(t.projectDir, ".git"));
    const s = await t.session();
    const body = await agentGet<Body>(`${s.r}/p`);
    expect(body).toMatchObject({ ok: true, root: "/project", packageManager: "pnpm" });
    // Looked up as the project's commands find them (their PATH, and their identity when the bridge is root).
    const lookup = agentLookupOf({
      id: "",
      name: "",
      root: t.projectDir,
      permissions: { write: false, terminal: false, web: false },
    });
    expect(body.executables.node).toBe(await locateExecutable("node", lookup));
    expect(body.executables.node).toMatch(/node$/);
    expect(body.executables.rg).toBe(await locateExecutable("rg", lookup));
    // Every known executable is reported exactly once: found with its path, or missing.
    const missing = body.missing as string[];
    expect([...Object.keys(body.executables), ...missing].sort()).toEqual([...KNOWN_EXECUTABLES].sort());
    for (const name of missing) expect(await locateExecutable(name, lookup)).toBeUndefined();
    expect(body.markers).toEqual([
      { name: "package.json", kind: "file" },
      { name: "pnpm-lock.yaml", kind: "file" },
      { name: "tsconfig.json", kind: "file" },
      { name: "Makefile", kind: "file" },
      { name: ".git", kind: "dir" },
    ]);
    expect(body.packageJson).toEqual({
      name: "demo",
      version: "1.2.3",
      type: "module",
      scripts: { test: "vitest run", build: "tsc -p .", long: `${"x".repeat(300)}…` },
    });
  });

  it("finds only what the bridge's PATH holds", async () => {
    const bin = makeTempDir("bin");
    fs.writeFileSync(path.join(bin, "cargo"), "#!/bin/sh\n", { mode: 0o755 });
    fs.writeFileSync(path.join(bin, "go"), "not executable", { mode: 0o644 });
    expect(await locateExecutable("cargo", { searchPath: bin })).toBe(path.join(bin, "cargo"));
    expect(await locateExecutable("go", { searchPath: bin })).toBeUndefined();
    expect(await locateExecutable("node", { searchPath: "" })).toBeUndefined();
  });

  it.runIf(process.getuid?.() === 0)(
    "as root, advertises only programs the agent's identity can run (issue 27 item 5)",
    async () => {
      // Root's access() passes any x bit behind any folder; the project's commands run as its owner.
      const privateDir = makeTempDir("root-only");
      fs.chmodSync(privateDir, 0o700);
      fs.mkdirSync(path.join(privateDir, "bin"), { mode: 0o755 });
      fs.writeFileSync(path.join(privateDir, "bin", "composer"), "#!/bin/sh\n", { mode: 0o755 });
      const shared = makeTempDir("shared-bin");
      fs.chmodSync(shared, 0o755);
      fs.writeFileSync(path.join(shared, "composer"), "#!/bin/sh\n", { mode: 0o755 });
      fs.writeFileSync(path.join(shared, "dotnet"), "#!/bin/sh\n", { mode: 0o744 });
      fs.writeFileSync(path.join(shared, "php"), "#!/bin/sh\n", { mode: 0o750 });
      fs.chownSync(path.join(shared, "php"), 0, TEST_AGENT_UID);
      const root = makeTempDir("project-identity");
      giveToAgent(root);
      const before = process.env.PATH;
      process.env.PATH = `${path.join(privateDir, "bin")}:${shared}:${before}`;
      try {
        const s = await t.session({ root, name: "identity" });
        const body = await agentGet<Body>(`${s.r}/p`);
        // The root-only copy comes first on PATH; the agent finds the shared one, as its shell would.
        expect(body.executables.composer).toBe(path.join(shared, "composer"));
        // Owner-only x bits (root's) do not count for the agent; group bits count for its group.
        expect(body.executables.dotnet).toBeUndefined();
        expect(body.missing).toContain("dotnet");
        expect(body.executables.php).toBe(path.join(shared, "php"));
        // The bridge's own lookup sees what the agent cannot.
        expect(await locateExecutable("composer")).toBe(path.join(privateDir, "bin", "composer"));
        expect(await locateExecutable("dotnet")).toBe(path.join(shared, "dotnet"));
      } finally {
        process.env.PATH = before;
      }
    },
  );

  it("explains an unreadable package.json instead of failing", async () => {
    const root = makeTempDir("project-bad-json");
    writeTree(root, { "package.json": "{ not json" });
    const s = await t.session({ root });
    const body = await agentGet<Body>(`${s.r}/p`);
    expect(body.ok).toBe(true);
    expect(String(body.packageJson?.error)).toMatch(/not valid JSON.*\/r\?path=package\.json/);
  });

  it("answers symlink_escape for a package.json symlinked out of the project, showing nothing of its target", async () => {
    const root = makeTempDir("project-pkg-escape");
    const outside = makeTempDir("project-pkg-outside");
    fs.writeFileSync(
      path.join(outside, "package.json"),
      JSON.stringify({ name: "outside-secret", scripts: { leak: "outside-secret" } }),
    );
    fs.writeFileSync(path.join(outside, "notes.txt"), "outside-secret text that is not JSON");
    fs.symlinkSync(path.join(outside, "package.json"), path.join(root, "package.json"));
    const s = await t.session({ root });
    const body = await agentGet<Body>(`${s.r}/p`);
    expect(body).toMatchObject({ ok: false, errorCode: "symlink_escape", retryable: false });
    expect(JSON.stringify(body)).not.toContain("outside-secret");
    // The JSON parse error once quoted the first characters of whatever file the link named.
    fs.rmSync(path.join(root, "package.json"));
    fs.symlinkSync(path.join(outside, "notes.txt"), path.join(root, "package.json"));
    const again = await agentGet<Body>(`${s.r}/p`);
    expect(again).toMatchObject({ ok: false, errorCode: "symlink_escape" });
    expect(JSON.stringify(again)).not.toContain("outside-secret");
  });

  it("follows a package.json symlinked inside the project, and explains one that is not a regular file", async () => {
    const root = makeTempDir("project-pkg-inside");
    writeTree(root, { "config/package.json": JSON.stringify({ name: "linked-inside", scripts: { test: "vitest" } }) });
    fs.symlinkSync("config/package.json", path.join(root, "package.json"));
    const s = await t.session({ root });
    const body = await agentGet<Body>(`${s.r}/p`);
    expect(body).toMatchObject({ ok: true, packageJson: { name: "linked-inside", scripts: { test: "vitest" } } });
    const fifoRoot = makeTempDir("project-pkg-fifo");
    execFileSync("mkfifo", [path.join(fifoRoot, "package.json")]);
    const fifo = await agentGet<Body>(`${(await t.session({ root: fifoRoot })).r}/p`);
    expect(fifo.ok).toBe(true);
    expect(String(fifo.packageJson?.error)).toMatch(/not a regular file/);
  });

  it("works on a project with no markers at all", async () => {
    const s = await t.session({ root: makeTempDir("project-empty") });
    const body = await agentGet<Body>(`${s.r}/p`);
    expect(body).toMatchObject({ ok: true, markers: [] });
    expect(body.packageJson).toBeUndefined();
  });

  it("refuses parameters it does not take", async () => {
    const s = await t.session({ root: makeTempDir("project-params") });
    expect(await agentGet(`${s.r}/p?path=x`)).toMatchObject({ ok: false, errorCode: "unknown_parameter" });
  });
});
