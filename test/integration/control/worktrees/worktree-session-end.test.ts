// What a worktree session leaves when it ends or fails to start (issue 31): a discard waits for the session's
// processes and its calls under way before its folder and branch go, and a create whose `git worktree add` failed
// partway leaves no branch, folder or worktree record behind, so the same create succeeds once the cause is fixed.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../../../server/kernel/tool/definition.js";
import { journalControls } from "../../../../server/mutation/journal/controls.js";
import { agentGet, giveToAgent, startTestBridge, type TestBridge } from "../../../helpers/bridge.js";
import { git, makeRepository } from "../../../helpers/git-repo.js";
import { url } from "../../mutation/fixtures.js";

interface SessionView {
  id: string;
  initUrl: string;
  worktree: { path: string; branch: string };
}
type Body = Record<string, any>;

/** How long the held call waits for the discard to answer before it is released anyway. */
const RELEASE_AFTER_MS = 2_000;

const bridges: TestBridge[] = [];
afterEach(async () => {
  await Promise.all(bridges.splice(0).map((b) => b.close()));
});

/** A real mutation tool, run through the real journal runner, that holds its call open until the test releases it. */
function holdTool() {
  let entered!: () => void;
  const started = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const tool = defineTool({
    id: "hold_probe",
    route: "hold",
    longRoutes: [],
    capability: "mutation",
    permission: "write",
    description: "test-only: holds its call open until released",
    example: "/hold?label=x",
    schema: z.object({ label: z.string(), ...journalControls }),
    output: z.strictObject({ ok: z.literal(true), label: z.string() }),
    url: {},
    async execute(args) {
      entered();
      await released;
      return { ok: true, label: args.label };
    },
  });
  return { tool, started, release };
}

async function bridgeWithRepository(extra: Parameters<typeof startTestBridge>[1] = {}) {
  const tb = await startTestBridge({}, extra);
  bridges.push(tb);
  const repo = makeRepository();
  const project = await tb.api<{ id: string }>("POST", "/api/projects", {
    name: "repo",
    root: repo,
    permissions: { write: true, terminal: true },
  });
  expect(project.status).toBe(201);
  return { tb, repo, projectId: project.body.id };
}

async function worktreeSession(tb: TestBridge, projectId: string, name: string) {
  const created = await tb.api<SessionView>("POST", "/api/sessions", { projectId, name, worktree: {} });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const init = await agentGet<{ bases: { m: string } }>(created.body.initUrl);
  return { ...created.body, m: init.bases.m };
}

describe("discarding a worktree session", () => {
  it("answers only once the session's call under way has recorded its outcome", async () => {
    const hold = holdTool();
    const { tb, repo, projectId } = await bridgeWithRepository({ extraTools: [hold.tool] });
    const session = await worktreeSession(tb, projectId, "held");
    const call = agentGet<Body>(url(session.m, "hold", [["label", "a"]])).catch((error: unknown) => error);
    await hold.started;
    const order: string[] = [];
    const discarded = tb.api("POST", `/api/sessions/${session.id}/worktree/discard`).then((answer) => {
      order.push("discarded");
      return answer;
    });
    // Released once the discard answers, or after a while if it waits (as it must): the order tells which.
    await Promise.race([discarded, new Promise((resolve) => setTimeout(resolve, RELEASE_AFTER_MS))]);
    order.push("released");
    hold.release();
    expect((await discarded).status).toBe(200);
    await call;
    expect(order).toEqual(["released", "discarded"]);
    expect(fs.existsSync(session.worktree.path)).toBe(false);
    expect(git(repo, "branch", "--list", session.worktree.branch).trim()).toBe("");
  });

  it("answers only once the session's processes are gone, one that ignores SIGTERM included", async () => {
    const { tb, projectId } = await bridgeWithRepository();
    const session = await worktreeSession(tb, projectId, "stubborn");
    const launch = await agentGet<Body>(
      url(session.m, "x", [
        ["bg", "1"],
        ["raw", "trap '' TERM; while :; do sleep 1; done"],
      ]),
    );
    expect(launch, JSON.stringify(launch)).toMatchObject({ ok: true, mode: "background", processState: "running" });
    expect(tb.bridge.terminal.processes.list({ sessionId: session.id })).toHaveLength(1);
    const answer = await tb.api("POST", `/api/sessions/${session.id}/worktree/discard`);
    expect(answer.status).toBe(200);
    expect(tb.bridge.terminal.processes.list({ sessionId: session.id })).toHaveLength(0);
    expect(fs.existsSync(session.worktree.path)).toBe(false);
  });
});

describe("a worktree create that git could not finish", () => {
  it("leaves no branch, folder or worktree record, and the same create succeeds once the cause is gone", async () => {
    const { tb, repo, projectId } = await bridgeWithRepository();
    // git makes the branch first, then the folder: a parent the owner cannot write stops it between the two.
    const parent = path.join(path.dirname(repo), "repo.worktrees");
    fs.mkdirSync(parent, { mode: 0o555 });
    const refused = await tb.api<Body>("POST", "/api/sessions", { projectId, name: "blocked", worktree: {} });
    expect(refused.status, JSON.stringify(refused.body)).toBeGreaterThanOrEqual(400);
    expect(refused.body.error.code).toBe("worktree_git_failed");
    expect(git(repo, "branch", "--format=%(refname:short)").trim()).toBe("main");
    expect(git(repo, "worktree", "list", "--porcelain")).not.toContain("blocked");
    expect(fs.existsSync(path.join(parent, "blocked"))).toBe(false);
    const sessions = await tb.api<Body[]>("GET", "/api/sessions");
    expect(JSON.stringify(sessions.body)).not.toContain("blocked");

    fs.chmodSync(parent, 0o755);
    giveToAgent(parent);
    const created = await tb.api<SessionView>("POST", "/api/sessions", { projectId, name: "blocked", worktree: {} });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.worktree.branch).toBe("urlbridge/blocked");
  });
});
