import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  giveToAgent,
  makeTempDir,
  startTestBridge,
  TEST_OPERATOR_TOKEN,
  type TestBridge,
} from "../../helpers/bridge.js";
import { BIN, cliEnv, runCli, unusedPort, type CliResult } from "./run-cli.js";

interface SessionJson {
  id: string;
  name: string;
  projectId: string;
  enabled: boolean;
  generation: number;
  initUrl: string;
  initPrompt: string;
  tools: string[];
}

function expectOneLineError(result: CliResult, code: number, pattern: RegExp): void {
  expect(result.code).toBe(code);
  expect(result.stdout).toBe("");
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^urlbridge: /);
  expect(lines[0]).toMatch(pattern);
}

describe("urlbridge CLI against a running bridge", () => {
  let t: TestBridge;
  let env: Record<string, string>;
  let linkToProject: string;

  beforeAll(async () => {
    t = await startTestBridge();
    env = {
      URLBRIDGE_STATE_DIR: t.stateDir,
      URLBRIDGE_CONTROL_PORT: new URL(t.bridge.controlUrl).port,
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    };
    fs.writeFileSync(path.join(t.projectDir, "hello.txt"), "hi\n");
    // The project's folder belongs to the agent's user, as an operator's does: write is refused otherwise.
    giveToAgent(t.projectDir);
    linkToProject = path.join(makeTempDir("links"), "via-link");
    fs.symlinkSync(t.projectDir, linkToProject);
  });
  afterAll(async () => t.close());

  it("adds a project with --json and stores its canonical root", async () => {
    const result = await runCli(["project", "add", "demo", linkToProject, "--write", "--json"], env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const project = JSON.parse(result.stdout) as { name: string; root: string; permissions: unknown };
    expect(project).toMatchObject({
      name: "demo",
      root: t.projectDir,
      permissions: { write: true, terminal: false, web: false },
    });
  });

  it("lists projects as a table and as JSON", async () => {
    const text = await runCli(["project", "list"], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ID\s+NAME\s+PERMISSIONS\s+ROOT\n/);
    expect(text.stdout).toContain("read, write");
    expect(text.stdout).toContain(t.projectDir);
    const list = JSON.parse((await runCli(["project", "list", "--json"], env)).stdout) as Array<{ name: string }>;
    expect(list.map((p) => p.name)).toEqual(["demo"]);
  });

  it("adds a project with the web permission (--web) and shows it", async () => {
    const result = await runCli(["project", "add", "docs-reader", t.projectDir, "--web"], env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("permissions: read, web");
    const list = JSON.parse((await runCli(["project", "list", "--json"], env)).stdout) as Array<{
      name: string;
      permissions: unknown;
    }>;
    expect(list.find((p) => p.name === "docs-reader")?.permissions).toEqual({
      write: false,
      terminal: false,
      web: true,
    });
  });

  let created: SessionJson;

  it("creates a session by project name and prints a working Init URL and the Init prompt", async () => {
    const result = await runCli(["session", "create", "demo", "--name", "agent-a"], env);
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    const initUrl = lines[lines.indexOf("Init URL:") + 1]!;
    expect(initUrl).toMatch(new RegExp(`^${t.bridge.dataUrl}/v0/init/[A-Za-z0-9]{8}$`));
    expect(result.stdout).toMatch(/^Session agent-a \(s_\w+\) · project demo · generation 1 · enabled$/m);
    expect(result.stdout).toContain("Init prompt (paste it into the agent's chat):");
    expect(result.stdout.split("Init prompt")[1]).toContain(initUrl);
    const init = (await (await fetch(initUrl)).json()) as { bases: { r: string } };
    const stat = (await (await fetch(`${init.bases.r}/t?path=hello.txt`)).json()) as { ok: boolean };
    expect(stat.ok).toBe(true);
  });

  it("creates a session by project id with --json, including the Init prompt", async () => {
    const projectId = (await t.api<Array<{ id: string }>>("GET", "/api/projects")).body[0]!.id;
    const result = await runCli(["session", "create", projectId, "--json"], env);
    expect(result.code).toBe(0);
    created = JSON.parse(result.stdout) as SessionJson;
    expect(created).toMatchObject({ projectId, enabled: true, generation: 1 });
    expect(created.initPrompt).toContain(created.initUrl);
    expect(created.tools).toContain("stat");
    expect((await fetch(created.initUrl)).status).toBe(200);
  });

  it("lists sessions as a table and as JSON", async () => {
    const text = await runCli(["session", "list"], env);
    expect(text.stdout).toMatch(/^ID\s+NAME\s+PROJECT\s+STATE\s+GEN\s+INIT URL\n/);
    expect(text.stdout).toContain("agent-a");
    const list = JSON.parse((await runCli(["session", "list", "--json"], env)).stdout) as SessionJson[];
    expect(list).toHaveLength(2);
    expect(list.find((s) => s.id === created.id)?.initUrl).toBe(created.initUrl);
  });

  it("rotates a session: the old Init URL stops working", async () => {
    const result = await runCli(["session", "rotate", created.id, "--json"], env);
    expect(result.code).toBe(0);
    const rotated = JSON.parse(result.stdout) as SessionJson;
    expect(rotated.generation).toBe(2);
    expect(rotated.initUrl).not.toBe(created.initUrl);
    expect((await fetch(created.initUrl)).status).toBe(404);
    expect((await fetch(rotated.initUrl)).status).toBe(200);
  });

  it("disables and enables a session by name: its Init URL stops answering, then answers again", async () => {
    const off = await runCli(["session", "disable", "agent-a"], env);
    expect(off.stderr).toBe("");
    expect(off.stdout).toMatch(/^Disabled session agent-a \(s_[^)]+\): its URLs answer nothing/);
    const [session] = (JSON.parse((await runCli(["session", "list", "--json"], env)).stdout) as SessionJson[]).filter(
      (s) => s.name === "agent-a",
    );
    expect(session!.enabled).toBe(false);
    expect((await fetch(session!.initUrl)).status).toBe(404);
    const on = await runCli(["session", "enable", session!.id, "--json"], env);
    expect(on.code).toBe(0);
    expect(JSON.parse(on.stdout)).toMatchObject({ id: session!.id, enabled: true });
    expect((await fetch(session!.initUrl)).status).toBe(200);
  });

  it("edits a project's permissions (rotating its sessions) and its name, then removes it and its sessions", async () => {
    await runCli(["project", "add", "scratch", t.projectDir], env);
    const created = JSON.parse((await runCli(["session", "create", "scratch", "--json"], env)).stdout) as SessionJson;
    const edit = await runCli(["project", "edit", "scratch", "--permissions", "write,web", "--name", "scratch-2"], env);
    expect(edit.stderr).toBe("");
    expect(edit.stdout).toMatch(/^Updated project scratch-2 \(p_[^)]+\): .*rotated 1 session\(s\)/);
    const project = (
      JSON.parse((await runCli(["project", "list", "--json"], env)).stdout) as Array<{
        name: string;
        permissions: unknown;
      }>
    ).find((p) => p.name === "scratch-2");
    expect(project!.permissions).toEqual({ write: true, terminal: false, web: true });
    expect((await fetch(created.initUrl)).status).toBe(404);
    const readOnly = await runCli(["project", "edit", "scratch-2", "--permissions", "none", "--json"], env);
    expect(JSON.parse(readOnly.stdout)).toMatchObject({ permissions: { write: false, terminal: false, web: false } });
    const removed = await runCli(["project", "remove", "scratch-2"], env);
    expect(removed.stdout).toMatch(/^Removed project scratch-2 .* the folder .* is untouched/);
    const sessions = JSON.parse((await runCli(["session", "list", "--json"], env)).stdout) as SessionJson[];
    expect(sessions.find((s) => s.id === created.id)).toBeUndefined();
    expect(fs.existsSync(path.join(t.projectDir, "hello.txt"))).toBe(true);
  });

  it("renames a session by name: same id and Init URL, listed under the new name", async () => {
    const created = JSON.parse(
      (await runCli(["session", "create", "demo", "--name", "to-rename", "--json"], env)).stdout,
    ) as SessionJson;
    const renamed = await runCli(["session", "rename", "to-rename", "reviewer bot"], env);
    expect(renamed.stderr).toBe("");
    expect(renamed.stdout).toBe(
      `Renamed session to-rename to reviewer bot (${created.id}): its URLs are unchanged.\n` +
        `An MCP client started with --session to-rename needs --session ${created.id} or the new name.\n`,
    );
    const again = await runCli(["session", "rename", created.id, "reviewer-2", "--json"], env);
    expect(JSON.parse(again.stdout)).toMatchObject({ id: created.id, name: "reviewer-2", generation: 1 });
    const sessions = JSON.parse((await runCli(["session", "list", "--json"], env)).stdout) as SessionJson[];
    expect(sessions.find((s) => s.id === created.id)).toMatchObject({ name: "reviewer-2", initUrl: created.initUrl });
    expect((await fetch(created.initUrl)).status).toBe(200);
    await runCli(["session", "delete", created.id], env);
  });

  it("deletes a session: gone from the list, its URLs answer 404", async () => {
    const created = JSON.parse((await runCli(["session", "create", "demo", "--json"], env)).stdout) as SessionJson;
    const deleted = await runCli(["session", "delete", created.id], env);
    expect(deleted.stdout).toBe(`Deleted session ${created.name} (${created.id}): its URLs no longer work.\n`);
    const sessions = JSON.parse((await runCli(["session", "list", "--json"], env)).stdout) as SessionJson[];
    expect(sessions.map((s) => s.id)).not.toContain(created.id);
    expect((await fetch(created.initUrl)).status).toBe(404);
  });

  // Each case is a real child process; they run side by side, a few at a time, to keep the file quick.
  const FAILURES_AT_ONCE = 4;
  const FAILURES: Array<[string[], number, RegExp]> = [
    [["session", "create", "no-such-project"], 1, /no project named or with id "no-such-project"/],
    [["session", "rotate", "s_missing"], 1, /no session named or with id "s_missing"/],
    [["project", "add", "demo", "/tmp"], 1, /^urlbridge: project_name_taken: /],
    [["project", "add", "ghost", "/definitely/not/here"], 1, /^urlbridge: root_not_found: /],
    [["session", "create"], 2, /takes <project-name-or-id>; got none/],
    [["project", "list", "--write"], 2, /--write does not apply to "urlbridge project list"/],
    [["session", "list", "--bogus"], 2, /Unknown option '--bogus'/],
    [["frobnicate"], 2, /unknown command "frobnicate"/],
    [["project"], 2, /"project" needs a subcommand/],
    [["project", "edit", "demo"], 1, /needs --permissions <list\|none> or --name <new-name>/],
    [["project", "edit", "demo", "--permissions", "write,shell"], 1, /--permissions takes a comma-separated list/],
    [["project", "remove", "no-such-project"], 1, /no project named or with id "no-such-project"/],
    [["session", "delete", "s_missing"], 1, /no session named or with id "s_missing"/],
    [["session", "disable"], 2, /takes <session>; got none/],
    [["session", "rename", "agent-a"], 2, /takes <session> <new-name>; got "agent-a"/],
    [["session", "rename", "agent-a", "x".repeat(65)], 1, /^urlbridge: invalid_request: name: name is at most 64/],
    [["session", "rename", "s_missing", "new"], 1, /no session named or with id "s_missing"/],
  ];

  it("fails in one stderr line with exit 1 (operation failed) or 2 (bad usage)", async () => {
    // A few at a time: seventeen node processes at once outlast the CLI's own timeout on a busy 2-core machine.
    const results: CliResult[] = [];
    for (let i = 0; i < FAILURES.length; i += FAILURES_AT_ONCE)
      results.push(...(await Promise.all(FAILURES.slice(i, i + FAILURES_AT_ONCE).map(([args]) => runCli(args, env)))));
    results.forEach((result, i) => {
      const [args, code, pattern] = FAILURES[i]!;
      expect({ args, code: result.code, stderr: result.stderr }).toMatchObject({ args, code });
      expectOneLineError(result, code, pattern);
    });
  }, 180_000);

  it("reports a wrong operator token as unauthorized, and a stopped server as unreachable", async () => {
    const port = String(await unusedPort());
    const [wrongToken, down] = await Promise.all([
      runCli(["project", "list"], { ...env, URLBRIDGE_OPERATOR_TOKEN: "not-the-right-token-at-all" }),
      runCli(["session", "list"], { ...env, URLBRIDGE_CONTROL_PORT: port }),
    ]);
    expectOneLineError(wrongToken, 1, /^urlbridge: unauthorized: .*URLBRIDGE_OPERATOR_TOKEN/);
    expectOneLineError(
      down,
      1,
      new RegExp(`cannot reach the control plane at http://127\\.0\\.0\\.1:${port} \\(connection refused\\)`),
    );
  });

  it("rejects a bad URLBRIDGE_* value in one line with exit 2", async () => {
    expectOneLineError(
      await runCli(["project", "list"], { ...env, URLBRIDGE_CONTROL_PORT: "http" }),
      2,
      /URLBRIDGE_CONTROL_PORT/,
    );
  });
});

describe("urlbridge serve and token with a generated token file", () => {
  it("serves, answers the CLI with the token from the state dir, and stops on SIGTERM", async () => {
    const stateDir = makeTempDir("cli-state");
    const env = {
      URLBRIDGE_STATE_DIR: stateDir,
      URLBRIDGE_CONTROL_PORT: String(await unusedPort()),
      URLBRIDGE_DATA_PORT: String(await unusedPort()),
      URLBRIDGE_LOG_LEVEL: "info",
    };
    const before = await runCli(["token"], env);
    expect(before.stdout).toContain(
      `No operator token yet: the server generates ${path.join(stateDir, "operator-token")}`,
    );

    const server = spawn(process.execPath, [BIN, "serve"], { env: cliEnv(env), stdio: ["ignore", "ignore", "pipe"] });
    let log = "";
    try {
      await new Promise<void>((resolve, reject) => {
        server.stderr.on("data", (chunk: Buffer) => {
          log += chunk.toString("utf8");
          if (log.includes("data plane on")) resolve();
        });
        server.on("exit", (code) => reject(new Error(`serve exited early (${code}): ${log}`)));
      });
      const file = path.join(stateDir, "operator-token");
      const token = fs.readFileSync(file, "utf8").trim();
      expect(log).toContain(file);
      expect(log).not.toContain(token);

      const where = await runCli(["token"], env);
      // The hint is pasteable here: run from the checkout (npx) with this state dir, which is not the default.
      expect(where.stdout).toBe(
        `The operator token is stored in ${file}\nPrint it with: URLBRIDGE_STATE_DIR=${stateDir} npx urlbridge token --show\n`,
      );
      expect((await runCli(["token", "--show"], env)).stdout).toBe(`${token}\n`);
      expect(JSON.parse((await runCli(["token", "--json"], env)).stdout)).toEqual({
        source: "file",
        file,
        exists: true,
      });

      const sessions = await runCli(["session", "list", "--json"], env);
      expect(sessions.stderr).toBe("");
      expect(JSON.parse(sessions.stdout)).toEqual([]);
    } finally {
      const exited = new Promise<number | null>((resolve) => server.on("exit", (code) => resolve(code)));
      server.kill("SIGTERM");
      expect(await exited).toBe(0);
    }
  });
});
