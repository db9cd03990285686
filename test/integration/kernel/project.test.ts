import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateExecutable } from "../../../server/kernel/executables.js";
import { KNOWN_EXECUTABLES } from "../../../server/kernel/project.js";
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
