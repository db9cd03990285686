// A worktree session under URLBRIDGE_SANDBOX=container (issue 31), through a real in-process bridge and the real
// Docker engine: /x runs in the worktree, git reads the main repository's metadata through its read-only mount (so
// status and log work and a commit in the container fails), /h commits beside the bridge, the main working tree
// and other projects stay out of sight; a main session and a worktree session of one project take turns and run
// at once, each in its root's own warm container, and a deleted worktree session's container goes while the main
// session's bg=1 job keeps running (ending one session restarts only its own root's container).
import fs from "node:fs";
import path from "node:path";
import Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL_INSTANCE, LABEL_ROOT } from "../../server/sandbox/container/spec.js";
import { encodeQueryValue, encodeUrlText } from "../../server/url-grammar/encode.js";
import {
  agentGet,
  giveToAgent,
  makeTempDir,
  removeTempDirs,
  startTestBridge,
  type TestBridge,
} from "../helpers/bridge.js";
import { git, makeRepository } from "../helpers/git-repo.js";
import { BRIDGE_IMAGE } from "./support/containers.js";
import { createSandboxProbe, eventually } from "./support/sandbox-probe.js";

type Body = Record<string, unknown> & { ok: boolean };

const INSTANCE = `e2e-worktree-${process.pid}`;
/** Polls are bounded: a broken journal fails the test instead of hanging it. */
const MAX_POLLS = 120;
/** Turns each session takes in the alternation test. */
const ALTERNATIONS = 3;
const docker = new Dockerode();
const { containersOf, processesIn } = createSandboxProbe(docker, INSTANCE);

let t: TestBridge;
let repo: string;
let worktree: string;
let projectId: string;
let mainM: string;
let treeM: string;
let treeId: string;
let otherRoot: string;

async function settle(url: string): Promise<Body> {
  let body = await agentGet<Body>(url);
  for (let i = 0; i < MAX_POLLS && (body.state === "pending" || body.state === "running"); i++)
    body = await agentGet<Body>(String(body.poll));
  return body;
}

const x = (base: string, command: string) => settle(`${base}/x?raw=${encodeUrlText(command)}`);
const branchTip = () => git(repo, "rev-parse", "urlbridge/boxed").trim();

async function initM(initUrl: string): Promise<string> {
  return (await agentGet<{ bases: { m: string } }>(initUrl)).bases.m;
}

describe("a worktree session in a sandbox container", () => {
  beforeAll(async () => {
    await docker.ping();
    // The appliance image global-setup.ts built (its tag, named before any file here changed): it has git and
    // coreutils, which the default stand-in sandbox image lacks.
    t = await startTestBridge({
      URLBRIDGE_SANDBOX: "container",
      URLBRIDGE_SANDBOX_INSTANCE: INSTANCE,
      URLBRIDGE_SANDBOX_IMAGE: process.env.URLBRIDGE_IMAGE ?? BRIDGE_IMAGE,
    });
    repo = makeRepository("boxed-repo");
    fs.writeFileSync(path.join(repo, "main-only.txt"), "in the main working tree only\n");
    fs.writeFileSync(path.join(repo, "who.txt"), "main\n");
    giveToAgent(path.dirname(repo));
    const project = await t.api<{ id: string }>("POST", "/api/projects", {
      name: "boxed",
      root: repo,
      permissions: { write: true, terminal: true },
    });
    projectId = project.body.id;
    const main = await t.api<{ initUrl: string }>("POST", "/api/sessions", { projectId, name: "main" });
    const tree = await t.api<{ id: string; initUrl: string; worktree: { path: string } }>("POST", "/api/sessions", {
      projectId,
      name: "boxed",
      worktree: {},
    });
    expect(tree.status, JSON.stringify(tree.body)).toBe(201);
    worktree = tree.body.worktree.path;
    treeId = tree.body.id;
    mainM = await initM(main.body.initUrl);
    treeM = await initM(tree.body.initUrl);
    otherRoot = makeTempDir("wt-other");
    fs.writeFileSync(path.join(otherRoot, "b-secret.txt"), "project b only\n");
    giveToAgent(otherRoot);
    await t.api("POST", "/api/projects", { name: "other", root: otherRoot, permissions: {} });
  });

  afterAll(async () => {
    await t?.close();
    for (const info of await docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_INSTANCE}=${INSTANCE}`] },
    }))
      await docker.getContainer(info.Id).remove({ force: true });
    removeTempDirs();
  });

  it("runs /x in the worktree and reads a file the session wrote with /w", async () => {
    const written = await agentGet<Body>(`${treeM}/w?path=notes.txt&raw=${encodeUrlText("from the worktree\n")}`);
    expect(written).toMatchObject({ ok: true });
    const body = await x(treeM, "pwd; cat notes.txt");
    expect(body).toMatchObject({ ok: true, exitCode: 0, stdout: "/project\nfrom the worktree\n", cwd: "/project" });
    expect(fs.readFileSync(path.join(worktree, "notes.txt"), "utf8")).toBe("from the worktree\n");
  });

  it("runs git status and git log inside the container", async () => {
    const status = await x(treeM, "git status --short --branch");
    expect(status, JSON.stringify(status)).toMatchObject({ ok: true, exitCode: 0 });
    expect(String(status.stdout)).toContain("## urlbridge/boxed");
    expect(String(status.stdout)).toContain("?? notes.txt");
    expect(await x(treeM, "git log --format=%s")).toMatchObject({ ok: true, exitCode: 0, stdout: "first\n" });
  });

  it("cannot commit inside the container: the repository's metadata is mounted read-only", async () => {
    const before = branchTip();
    const body = await x(
      treeM,
      "git add notes.txt && git -c user.name=a -c user.email=a@example.com commit -q -m boxed; echo exit=$?",
    );
    expect(body).toMatchObject({ ok: true });
    expect(String(body.stdout)).not.toContain("exit=0");
    expect(String(body.stderr)).toMatch(/read-only|Read-only|unable to|could not|cannot/i);
    expect(branchTip()).toBe(before);
  });

  it("commits with /h, beside the bridge, and the container's git sees the commit", async () => {
    const before = branchTip();
    const body = await agentGet<Body>(`${treeM}/h?message=${encodeQueryValue("notes from the box")}`);
    expect(body, JSON.stringify(body)).toMatchObject({ ok: true });
    expect(branchTip()).not.toBe(before);
    expect(git(repo, "log", "-1", "--format=%s", "urlbridge/boxed").trim()).toBe("notes from the box");
    expect(await x(treeM, "git log -1 --format=%s; git status --short")).toMatchObject({
      ok: true,
      exitCode: 0,
      stdout: "notes from the box\n",
    });
    expect(git(repo, "rev-parse", "main").trim()).toBe(git(repo, "rev-parse", "urlbridge/boxed~1").trim());
  });

  it("does not show the main working tree or another project's folder", async () => {
    const body = await x(
      treeM,
      `ls -A ${repo}; cat ${path.join(repo, "main-only.txt")}; cat ${path.join(otherRoot, "b-secret.txt")}; echo done`,
    );
    expect(body).toMatchObject({ ok: true });
    // Only the metadata folder is mounted, at the path the worktree's .git file names.
    expect(body.stdout).toBe(".git\ndone\n");
    expect(String(body.stderr)).toContain("No such file");
  });

  it("answers a main session and a worktree session of one project taking turns, each in its own warm container", async () => {
    fs.writeFileSync(path.join(worktree, "who.txt"), "worktree\n");
    giveToAgent(path.join(worktree, "who.txt"));
    const mainTurn = () => x(mainM, "cat who.txt; test -d .git && echo git-dir");
    const treeTurn = () => x(treeM, "cat who.txt; git rev-parse --abbrev-ref HEAD");
    const mainAnswer = { ok: true, exitCode: 0, stdout: "main\ngit-dir\n" };
    const treeAnswer = { ok: true, exitCode: 0, stdout: "worktree\nurlbridge/boxed\n" };
    expect(await mainTurn()).toMatchObject(mainAnswer);
    const ids = async () => (await containersOf(projectId)).map((info) => [info.Labels[LABEL_ROOT], info.Id]).sort();
    const before = await ids();
    // One container per root: the project folder's and the worktree's, each made once.
    expect(before.map(([root]) => root)).toEqual([repo, worktree].sort());
    for (let turn = 0; turn < ALTERNATIONS; turn++) {
      expect(await mainTurn()).toMatchObject(mainAnswer);
      expect(await treeTurn()).toMatchObject(treeAnswer);
    }
    // ...and at the same moment, neither borrowing the other's container.
    const [both, other] = await Promise.all([mainTurn(), treeTurn()]);
    expect(both).toMatchObject(mainAnswer);
    expect(other).toMatchObject(treeAnswer);
    expect(await ids()).toEqual(before);
  });

  it("removes a deleted worktree session's container; the project folder's stays, its bg=1 job still running", async () => {
    const job = await agentGet<Body>(`${mainM}/x?bg=1&raw=${encodeUrlText("exec sleep 1004")}`);
    expect(job).toMatchObject({ ok: true, mode: "background", processState: "running" });
    const mainContainer = (await containersOf(projectId)).find((info) => info.Labels[LABEL_ROOT] === repo)!;
    const startedAt = async () => (await docker.getContainer(mainContainer.Id).inspect()).State.StartedAt;
    const started = await startedAt();
    expect((await t.api("DELETE", `/api/sessions/${treeId}`)).status).toBe(204);
    expect(fs.existsSync(worktree)).toBe(false);
    expect(await x(mainM, "cat who.txt")).toMatchObject({ ok: true, stdout: "main\n" });
    const left = await eventually(
      () => containersOf(projectId),
      (list) => list.length === 1,
    );
    expect(left.map((info) => info.Labels[LABEL_ROOT])).toEqual([repo]);
    // The worktree session's end restarted no other root's container: the main session's job is where it was.
    expect(await startedAt()).toBe(started);
    expect((await processesIn(projectId)).some((line) => line.startsWith("sleep 1004"))).toBe(true);
    expect(await settle(String(job.stop))).toMatchObject({ ok: true, mode: "stop", stopped: true });
  });
});
