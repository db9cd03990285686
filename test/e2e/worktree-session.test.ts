// A worktree session in the Docker appliance (issue 31): the repository is bind-mounted under /projects as compose
// runs it; the session is created through the control API, its agent edits a file and runs git status through the
// URL data plane (in its worktree, /projects/<name>.worktrees/<session>, on the same host mount), the worktree
// survives a container restart, and deleting the session removes it from the bind-mounted folder.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Wait, type StartedTestContainer } from "testcontainers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeUrlText } from "../../server/url-grammar/encode.js";
import {
  buildBridgeImage,
  BRIDGE_IMAGE,
  CONTROL_PORT,
  DATA_PORT,
  LoopbackContainer,
  stopAll,
} from "./support/containers.js";

const MAX_POLLS = 60;
type Body = Record<string, unknown> & { ok: boolean };

let bridge: StartedTestContainer | undefined;
let projectsDir: string;
let operatorToken: string;

const controlUrl = () => `http://127.0.0.1:${bridge!.getMappedPort(CONTROL_PORT)}`;
/** Init URLs name the container's data plane; the test reaches it through the published port. */
const fromHost = (url: string) =>
  url.replace(/^http:\/\/[^/]+/, `http://127.0.0.1:${bridge!.getMappedPort(DATA_PORT)}`);

async function api<T>(method: string, route: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${controlUrl()}${route}`, {
    method,
    headers: { authorization: `Bearer ${operatorToken}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

async function agent(url: string): Promise<Body> {
  let body = (await (await fetch(fromHost(url))).json()) as Body;
  for (let i = 0; i < MAX_POLLS && (body.state === "pending" || body.state === "running"); i++) {
    body = (await (await fetch(fromHost(String(body.poll)))).json()) as Body;
  }
  return body;
}

/** git on the host's side of the bind mount, as the operator would look. */
function hostGit(dir: string, ...args: string[]): string {
  return execFileSync(
    "git",
    ["-c", "safe.directory=*", "-c", "user.name=Test", "-c", "user.email=t@example.com", ...args],
    { cwd: dir, encoding: "utf8", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" } },
  );
}

function chownTree(dir: string): void {
  fs.lchownSync(dir, 1000, 1000);
  if (fs.lstatSync(dir).isDirectory()) for (const name of fs.readdirSync(dir)) chownTree(path.join(dir, name));
}

beforeAll(async () => {
  await buildBridgeImage();
  projectsDir = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-e2e-worktree-"));
  const repo = path.join(projectsDir, "demo");
  fs.mkdirSync(repo);
  hostGit(repo, "init", "-q", "-b", "main");
  fs.writeFileSync(path.join(repo, "a.txt"), "one\n");
  hostGit(repo, "add", ".");
  hostGit(repo, "commit", "-q", "-m", "first");
  // As compose's ./projects belongs to the operator's user (uid 1000 in the image's fallback): the bind-mounted
  // folder itself too, so the worktree folder beside the project (/projects/demo.worktrees) can be made there.
  chownTree(projectsDir);
  fs.chmodSync(projectsDir, 0o755);
  bridge = await new LoopbackContainer(BRIDGE_IMAGE)
    .withExposedPorts(CONTROL_PORT, DATA_PORT)
    .withBindMounts([{ source: projectsDir, target: "/projects" }])
    .withWaitStrategy(Wait.forHealthCheck())
    .withStartupTimeout(120_000)
    .start();
  const token = await bridge.exec(["urlbridge", "token", "--show"]);
  operatorToken = token.stdout.trim();
});

afterAll(async () => {
  await stopAll([bridge]);
  if (projectsDir) fs.rmSync(projectsDir, { recursive: true, force: true });
});

describe("a worktree session in the appliance", () => {
  let sessionId: string;
  let initUrl: string;
  const hostWorktree = () => path.join(projectsDir, "demo.worktrees", "e2e-agent");

  it("has git in the image", async () => {
    const version = await bridge!.exec(["git", "--version"]);
    expect(version.exitCode).toBe(0);
    expect(version.stdout).toMatch(/^git version \d/);
  });

  it("creates the session with its own worktree on the bind-mounted repository", async () => {
    const project = await api<{ id: string }>("POST", "/api/projects", {
      name: "demo",
      root: "/projects/demo",
      permissions: { write: true, terminal: true },
    });
    expect(project.status).toBe(201);
    const created = await api<{ id: string; initUrl: string; worktree: Record<string, unknown> }>(
      "POST",
      "/api/sessions",
      {
        projectId: project.body.id,
        name: "e2e agent",
        worktree: {},
      },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.worktree).toMatchObject({
      path: "/projects/demo.worktrees/e2e-agent",
      branch: "urlbridge/e2e-agent",
      baseRef: "main",
      stale: false,
    });
    sessionId = created.body.id;
    initUrl = created.body.initUrl;
    expect(fs.readFileSync(path.join(hostWorktree(), "a.txt"), "utf8")).toBe("one\n");
    expect(fs.statSync(path.join(hostWorktree(), "a.txt")).uid).toBe(1000);
  });

  it("edits a file and runs git status through the URL data plane, in the worktree only", async () => {
    const { bases } = (await (await fetch(fromHost(initUrl))).json()) as { bases: { r: string; m: string } };
    expect(await agent(`${bases.r}/r?path=a.txt`)).toMatchObject({ ok: true });
    expect(await agent(`${bases.m}/w?path=a.txt&raw=${encodeUrlText("changed in the worktree\n")}`)).toMatchObject({
      ok: true,
    });
    const status = await agent(`${bases.m}/x?raw=${encodeUrlText("git status --short --branch")}`);
    expect(status, JSON.stringify(status)).toMatchObject({ ok: true, exitCode: 0 });
    expect(String(status.stdout)).toContain("## urlbridge/e2e-agent");
    expect(String(status.stdout)).toContain(" M a.txt");
    const v = await agent(`${bases.r}/v?op=status`);
    expect(v).toMatchObject({ ok: true });
    expect(JSON.stringify(v)).toContain("a.txt");
    expect(fs.readFileSync(path.join(hostWorktree(), "a.txt"), "utf8")).toBe("changed in the worktree\n");
    expect(fs.readFileSync(path.join(projectsDir, "demo", "a.txt"), "utf8")).toBe("one\n");
    // The .git link file is not the agent's to read.
    expect(await agent(`${bases.r}/r?path=.git`)).toMatchObject({ ok: false, errorCode: "path_outside_root" });
  });

  it("keeps the worktree across a container restart", async () => {
    await bridge!.restart();
    const session = await api<{ worktree: { stale: boolean } }>("GET", `/api/sessions/${sessionId}`);
    expect(session.status).toBe(200);
    expect(session.body.worktree.stale).toBe(false);
    const { bases } = (await (await fetch(fromHost(initUrl))).json()) as { bases: { r: string } };
    expect(JSON.stringify(await agent(`${bases.r}/r?path=a.txt`))).toContain("changed in the worktree");
  });

  it("deletes the session and, with it, the worktree and its branch from the bind-mounted repository", async () => {
    expect((await api("DELETE", `/api/sessions/${sessionId}`)).status).toBe(204);
    expect(fs.existsSync(hostWorktree())).toBe(false);
    const repo = path.join(projectsDir, "demo");
    expect(hostGit(repo, "branch", "--format=%(refname:short)").trim()).toBe("main");
    expect(hostGit(repo, "worktree", "list", "--porcelain")).not.toContain("e2e-agent");
    expect(hostGit(repo, "status", "--porcelain")).toBe("");
  });
});
