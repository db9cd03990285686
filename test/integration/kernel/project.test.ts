import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateExecutable } from "../../../server/kernel/read/executables.js";
import { KNOWN_EXECUTABLES } from "../../../server/kernel/read/project.js";
import { agentGet, makeTempDir, startTestBridge, type TestBridge } from "../../helpers/bridge.js";
import { writeTree } from "./fixtures.js";

type Body = Record<string, unknown> & { executables: Record<string, string>; markers: Array<{ name: string; kind: string }>; packageJson?: Record<string, unknown> };

describe("project (/p)", () => {
  let t: TestBridge;

  beforeAll(async () => {
    t = await startTestBridge();
  });
  afterAll(async () => t.close());

  it("reports executables on PATH, root markers, scripts and the package manager", async () => {
    writeTree(t.projectDir, {
      "package.json": JSON.stringify({ name: "demo", version: "1.2.3", type: "module", scripts: { test: "vitest run", build: "tsc -p .", long: "x".repeat(400), bad: 42 } }),
      "pnpm-lock.yaml": "lockfileVersion: 9\n",
      "tsconfig.json": "{}",
      "Makefile": "all:\n",
      "src/index.ts": "",
    });
    fs.mkdirSync(path.join(t.projectDir, ".git"));
    const s = await t.session();
    const body = await agentGet<Body>(`${s.r}/p`);
    expect(body).toMatchObject({ ok: true, root: "/project", packageManager: "pnpm" });
    expect(body.executables.node).toBe(await locateExecutable("node"));
    expect(body.executables.node).toMatch(/node$/);
    expect(body.executables.rg).toBe(await locateExecutable("rg"));
    // Every known executable is reported exactly once: found with its path, or missing.
    const missing = body.missing as string[];
    expect([...Object.keys(body.executables), ...missing].sort()).toEqual([...KNOWN_EXECUTABLES].sort());
    for (const name of missing) expect(await locateExecutable(name)).toBeUndefined();
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
    expect(await locateExecutable("cargo", bin)).toBe(path.join(bin, "cargo"));
    expect(await locateExecutable("go", bin)).toBeUndefined();
    expect(await locateExecutable("node", "")).toBeUndefined();
  });

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
    fs.writeFileSync(path.join(outside, "package.json"), JSON.stringify({ name: "outside-secret", scripts: { leak: "outside-secret" } }));
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
