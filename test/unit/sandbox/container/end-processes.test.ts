// Which containers a project's endProcesses restarts (issue 31): one root's when a session of that root ends, every
// root's when none is named, and a gone root's container removed. The Docker engine is a process boundary we do not
// own: a fake engine stands in for it here (labelled below); test/e2e/worktree-container.test.ts runs the real one.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Dockerode from "dockerode";
import { afterEach, describe, expect, it } from "vitest";
import { createProjectContainers } from "../../../../server/sandbox/container/manager.js";
import {
  LABEL_INSTANCE,
  LABEL_PROJECT,
  LABEL_ROLE,
  LABEL_ROOT,
  SANDBOX_ROLE,
} from "../../../../server/sandbox/container/spec.js";

const INSTANCE = "unit-end-processes";
const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tempRoot(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "end-processes-")));
  temps.push(dir);
  return dir;
}

/** FAKE Docker engine (test-only): lists containers by label filter and records restarts and removals. */
function fakeEngine(containers: Array<{ id: string; project: string; root: string }>) {
  const calls: string[] = [];
  const infos = containers.map((c) => ({
    Id: c.id,
    State: "running",
    Labels: {
      [LABEL_ROLE]: SANDBOX_ROLE,
      [LABEL_INSTANCE]: INSTANCE,
      [LABEL_PROJECT]: c.project,
      [LABEL_ROOT]: c.root,
    } as Record<string, string>,
  }));
  const engine = {
    listContainers: (options: { filters: { label: string[] } }) =>
      Promise.resolve(
        infos.filter((info) =>
          options.filters.label.every((pair) => {
            const [key, ...value] = pair.split("=");
            return info.Labels[key!] === value.join("=");
          }),
        ),
      ),
    getContainer: (id: string) => ({
      restart: () => (calls.push(`restart ${id}`), Promise.resolve()),
      remove: () => (calls.push(`remove ${id}`), Promise.resolve()),
    }),
  };
  return { docker: engine as unknown as Dockerode, calls };
}

describe("endProcesses", () => {
  it("restarts only the named root's container: the project's other roots and other projects keep theirs", async () => {
    const [main, tree, other] = [tempRoot(), tempRoot(), tempRoot()];
    const { docker, calls } = fakeEngine([
      { id: "main", project: "p", root: main },
      { id: "tree", project: "p", root: tree },
      { id: "other", project: "q", root: other },
    ]);
    const containers = createProjectContainers({ docker, instance: INSTANCE });
    expect(await containers.endProcesses("p", tree)).toBe(true);
    expect(calls).toEqual(["restart tree"]);
    calls.length = 0;
    expect(await containers.endProcesses("p", `${main}/.`)).toBe(true);
    expect(calls).toEqual(["restart main"]);
  });

  it("restarts every root's container of the project when no root is named", async () => {
    const [main, tree] = [tempRoot(), tempRoot()];
    const { docker, calls } = fakeEngine([
      { id: "main", project: "p", root: main },
      { id: "tree", project: "p", root: tree },
    ]);
    expect(await createProjectContainers({ docker, instance: INSTANCE }).endProcesses("p")).toBe(true);
    expect(calls.sort()).toEqual(["restart main", "restart tree"]);
  });

  it("removes the container of a root whose folder is gone instead of restarting it", async () => {
    const tree = tempRoot();
    const { docker, calls } = fakeEngine([{ id: "tree", project: "p", root: tree }]);
    fs.rmSync(tree, { recursive: true });
    expect(await createProjectContainers({ docker, instance: INSTANCE }).endProcesses("p", tree)).toBe(true);
    expect(calls).toEqual(["remove tree"]);
  });
});
