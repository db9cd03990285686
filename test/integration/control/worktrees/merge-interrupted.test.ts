// A merge the bridge stopped between moving the base and recording the outcome (issue 31): the retry finds the branch
// already in its base and records `merged` with the base's commit, once; a session whose branch never moved still
// has nothing to merge. Real repository, real bridge, the control API; the base is moved by hand as the lost merge
// would have moved it.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, giveToAgent, startTestBridge, type TestBridge } from "../../../helpers/bridge.js";
import { git, makeRepository } from "../../../helpers/git-repo.js";
import { url } from "../../mutation/fixtures.js";

type Body = Record<string, any>;
interface Created {
  id: string;
  initUrl: string;
}

let tb: TestBridge;
let repo: string;
let projectId: string;

async function worktreeSession(name: string): Promise<Created & { m: string }> {
  const created = await tb.api<Created>("POST", "/api/sessions", { projectId, name, worktree: {} });
  expect(created.status).toBe(201);
  const init = await agentGet<{ bases: { m: string } }>(created.body.initUrl);
  return { ...created.body, m: init.bases.m };
}

const merge = (id: string) => tb.api<Body>("POST", `/api/sessions/${id}/worktree/merge`, { mode: "auto" });
const outcomeOf = async (id: string) => (await tb.api<Body>("GET", `/api/sessions/${id}`)).body.worktree;

beforeAll(async () => {
  tb = await startTestBridge();
  repo = makeRepository();
  giveToAgent(path.dirname(repo));
  const project = await tb.api<{ id: string }>("POST", "/api/projects", {
    name: "repo",
    root: repo,
    permissions: { write: true, terminal: false },
  });
  projectId = project.body.id;
});

afterAll(async () => {
  await tb?.close();
});

describe("a merge interrupted after the base moved", () => {
  it("records merged with the base's commit when the retry finds the branch already in the base", async () => {
    const agent = await worktreeSession("lost-merge");
    expect(await agentGet<Body>(url(agent.m, "w", [["path", "b.txt"]], "two\n"))).toMatchObject({ ok: true });
    expect(await agentGet<Body>(url(agent.m, "h", [["message", "add b"]]))).toMatchObject({ ok: true });
    // What the lost merge did: main fast-forwarded to the branch (and one more commit on top since).
    git(repo, "merge", "-q", "--ff-only", "urlbridge/lost-merge");
    git(repo, "commit", "-q", "--allow-empty", "-m", "after the merge");
    giveToAgent(repo);
    const main = git(repo, "rev-parse", "main").trim();
    expect(await outcomeOf(agent.id)).toMatchObject({ outcome: null });

    const retried = await merge(agent.id);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body).toMatchObject({
      kind: "already-merged",
      outcome: "merged",
      commit: main,
      previous: main,
      baseRef: "main",
      branch: "urlbridge/lost-merge",
    });
    expect(await outcomeOf(agent.id)).toMatchObject({ outcome: "merged", outcomeCommit: main });
    expect(git(repo, "rev-parse", "main").trim()).toBe(main);

    // Recorded once: a further merge has nothing to do.
    const again = await merge(agent.id);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: { code: "nothing_to_merge" } });
  });

  it("still answers nothing_to_merge for a branch that never left its base", async () => {
    const idle = await worktreeSession("idle");
    const answer = await merge(idle.id);
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ error: { code: "nothing_to_merge" } });
    expect(await outcomeOf(idle.id)).toMatchObject({ outcome: null });
  });
});
