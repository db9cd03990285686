// The sandbox launcher binary itself (native/urlbridge-sandbox.c), driven as the bridge drives it: the probe,
// the race-free cwd walk, the status line, tree ending on SIGTERM, and the plan launcher.ts builds per project.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createSandbox, launcherBinary, probeLauncher } from "../../../server/sandbox/launcher.js";
import { giveToAgent, makeTempDir } from "../../helpers/bridge.js";

const binary = launcherBinary();

function run(args: string[]) {
  const result = spawnSync(binary!, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe", "pipe"] });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, status: String(result.output[3] ?? "") };
}

describe.skipIf(!binary)("urlbridge-sandbox", () => {
  it("probes Landlock, its ptrace and signal rules, and whether it runs as root", () => {
    const probe = probeLauncher()!;
    expect(probe).toMatchObject({
      fs: probe.landlock >= 1,
      ptrace: probe.landlock >= 1,
      net: probe.landlock >= 4,
      signals: probe.landlock >= 6,
    });
    expect(probe.root).toBe(process.getuid?.() === 0);
  });

  it("writes one status line with the program's exit code and runs it in the walked cwd", () => {
    const root = makeTempDir("launcher-cwd");
    fs.mkdirSync(path.join(root, "a", "b"), { recursive: true });
    const result = run(["--cwd-root", root, "--cwd", "a/b", "--status-fd", "3", "--", "/bin/sh", "-c", "pwd; exit 7"]);
    expect(result).toMatchObject({ code: 7, stdout: `${root}/a/b\n` });
    expect(JSON.parse(result.status)).toEqual({ exitCode: 7, signal: null, leftovers: 0 });
  });

  it.each([
    ["a symlinked component", "link/inner", /cwd component "link" of link\/inner is a symlink/],
    ["a parent step", "../..", /cwd component "\.\." is not allowed/],
    ["a missing folder", "nope", /cwd component "nope" of nope No such file/],
  ])("refuses %s in --cwd with exit 125 and a message naming the component", (_name, cwd, message) => {
    const root = makeTempDir("launcher-walk");
    fs.symlinkSync("/etc", path.join(root, "link"));
    const result = run(["--cwd-root", root, "--cwd", cwd, "--", "/bin/true"]);
    expect(result.code).toBe(125);
    expect(result.stderr).toMatch(/^urlbridge-sandbox: /);
    expect(result.stderr).toMatch(message);
  });

  it("ends a setsid'd daemon with the tree on SIGTERM and counts it as a leftover", async () => {
    const child = spawn(
      binary!,
      [
        "--status-fd",
        "3",
        "--grace-ms",
        "200",
        "--",
        "/bin/sh",
        "-c",
        "setsid -f sleep 311.5; echo up; exec sleep 312.5",
      ],
      {
        stdio: ["ignore", "pipe", "ignore", "pipe"],
      },
    );
    let status = "";
    child.stdio[3]!.on("data", (c: Buffer) => (status += c.toString()));
    await new Promise((resolve) => child.stdout!.once("data", resolve));
    child.kill("SIGTERM");
    const code = await new Promise((resolve) => child.once("exit", resolve));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(code).toBe(143);
    expect(JSON.parse(status)).toEqual({ exitCode: null, signal: "SIGTERM", leftovers: 1 });
    const survivors = fs
      .readdirSync("/proc")
      .filter(
        (n) =>
          /^\d+$/.test(n) &&
          fs.existsSync(`/proc/${n}/cmdline`) &&
          fs.readFileSync(`/proc/${n}/cmdline`, "utf8").includes("311.5"),
      );
    expect(survivors).toEqual([]);
  });

  it.skipIf((probeLauncher()?.landlock ?? 0) === 0)(
    "plans a project's allowlist without the state dir, the code or another project",
    () => {
      const stateDir = makeTempDir("launcher-state");
      const scratchDir = makeTempDir("launcher-scratch");
      const project = makeTempDir("launcher-project");
      const other = makeTempDir("launcher-other");
      giveToAgent(project);
      const sandbox = createSandbox({
        config: { sandbox: "auto", scratchDir, stateDir, agentFallback: { uid: 1000, gid: 1000 } },
        codeDir: path.resolve("."),
        projectRoots: () => [project, other],
      });
      expect(sandbox.status()).toMatchObject({
        mode: "landlock",
        filesystem: true,
        procProtection: true,
        perProjectIsolation: true,
      });
      const plan = sandbox.plan({ id: "p_test", root: project }, "", true)!;
      const allowed = plan.args.filter((_a, i) => ["--ro", "--rw"].includes(plan.args[i - 1] ?? ""));
      expect(allowed).toContain(project);
      expect(allowed).toContain(path.join(scratchDir, "p_test"));
      for (const forbidden of [stateDir, other, path.resolve(".")])
        expect(allowed.some((p) => forbidden === p || forbidden.startsWith(`${p}/`))).toBe(false);
      expect(plan.env).toEqual({ HOME: path.join(scratchDir, "p_test"), TMPDIR: path.join(scratchDir, "p_test") });
      // The version-control tool's plan (server/kernel/vcs/git-process.ts): the project is readable, not writable.
      const readOnly = sandbox.plan({ id: "p_test", root: project }, "", true, [], "ro")!;
      const given = (flag: string) => readOnly.args.filter((_a, i) => readOnly.args[i - 1] === flag);
      expect(given("--ro")).toContain(project);
      expect(given("--rw")).not.toContain(project);
      fs.writeFileSync(path.join(project, "seen.txt"), "seen\n");
      const attempt = spawnSync(
        readOnly.file,
        [...readOnly.args, "--", "/bin/sh", "-c", "cat seen.txt; echo no > written.txt"],
        { encoding: "utf8", cwd: readOnly.spawnCwd, env: { ...readOnly.env, PATH: "/usr/bin:/bin" } },
      );
      expect(attempt.stdout).toBe("seen\n");
      expect(fs.existsSync(path.join(project, "written.txt"))).toBe(false);
      if (process.getuid?.() === 0) {
        expect(plan.args.join(" ")).toContain("--uid 1000 --gid 1000");
        expect(fs.statSync(path.join(scratchDir, "p_test"))).toMatchObject({ uid: 1000, mode: expect.any(Number) });
        expect(fs.statSync(path.join(scratchDir, "p_test")).mode & 0o777).toBe(0o700);
      }
    },
  );
});

describe("URLBRIDGE_SANDBOX=none", () => {
  it("is reported as the unsafe opt-out and confines nothing, changes no identity", () => {
    const project = makeTempDir("launcher-none");
    const sandbox = createSandbox({
      config: {
        sandbox: "none",
        scratchDir: makeTempDir("launcher-none-scratch"),
        stateDir: makeTempDir("launcher-none-state"),
        agentFallback: { uid: 1000, gid: 1000 },
      },
      codeDir: path.resolve("."),
      projectRoots: () => [project],
    });
    expect(sandbox.status()).toMatchObject({
      mode: "none",
      filesystem: false,
      procProtection: false,
      identitySeparation: false,
    });
    expect(sandbox.status().warning).toMatch(/URLBRIDGE_SANDBOX=none/);
    const plan = sandbox.plan({ id: "p_none", root: project }, ".", true);
    if (plan) expect(plan.args.some((a) => ["--ro", "--rw", "--uid", "--require-landlock"].includes(a))).toBe(false);
  });
});

describe("start-up hygiene (server/main.ts)", () => {
  it("drops every URLBRIDGE_* secret from the environment and keeps the rest", async () => {
    const { dropSecretsFromEnvironment } = await import("../../../server/main.js");
    const env: NodeJS.ProcessEnv = {
      URLBRIDGE_OPERATOR_TOKEN: "t",
      URLBRIDGE_PLUGIN_API_KEY: "k",
      URLBRIDGE_DATA_PORT: "1",
      PATH: "/bin",
    };
    expect(dropSecretsFromEnvironment(env).sort()).toEqual(["URLBRIDGE_OPERATOR_TOKEN", "URLBRIDGE_PLUGIN_API_KEY"]);
    expect(env).toEqual({ URLBRIDGE_DATA_PORT: "1", PATH: "/bin" });
  });

  it.skipIf(process.getuid?.() !== 0)(
    "as root, gives an old uid-1000 state dir back to root, 0700 and files closed to others",
    async () => {
      const { secureStateDir } = await import("../../../server/main.js");
      const state = makeTempDir("launcher-old-state");
      fs.writeFileSync(path.join(state, "operator-token"), "x", { mode: 0o644 });
      fs.chmodSync(state, 0o755);
      for (const p of [state, path.join(state, "operator-token")]) fs.chownSync(p, 1000, 1000);
      secureStateDir(state);
      expect(fs.statSync(state)).toMatchObject({ uid: 0, gid: 0 });
      expect(fs.statSync(state).mode & 0o777).toBe(0o700);
      expect(fs.statSync(path.join(state, "operator-token")).uid).toBe(0);
      expect(fs.statSync(path.join(state, "operator-token")).mode & 0o077).toBe(0);
    },
  );
});
