// apply_patch's folder budget (server/mutation/files/apply-patch/budget.ts): the commit holds a descriptor per
// folder it writes in, so a real server started under `ulimit -n 256` takes patches over at most 64 folders, and
// refuses a larger one with patch_too_large before writing anything, where it used to run out of descriptors
// half-way (EMFILE, for its own commit and for every other call meanwhile) and roll back.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, makeTempDir, writeAsAgent, mkdirAsAgent, makeProjectDir } from "../../helpers/bridge.js";
import { connectMcpClient, tokenOfBase } from "../../helpers/mcp-clients.js";
import {
  controlApi as api,
  killServerProcesses,
  startServerProcess,
  type ServerProcess,
} from "../../helpers/server-process.js";
import { patchText, snapshotTree, url } from "./fixtures.js";

type Body = Record<string, unknown> & {
  ok: boolean;
  errorCode?: string;
  errorDetail?: Record<string, unknown>;
  state?: string;
};

const LIMIT = 256;
const BUDGET = LIMIT / 4;
const FOLDERS = 300;

/** One update per folder d0..d(n-1), each file's one line `v <i>` becoming `<tag> <i>`. */
function patchOver(folders: number, tag: string): string {
  return patchText(
    ...Array.from({ length: folders }, (_, i) => [
      `*** Update File: d${i}/f.txt`,
      "@@",
      `-v ${i}`,
      `+${tag} ${i}`,
    ]).flat(),
  );
}

describe("apply_patch in a bridge whose open-file limit is 256", () => {
  let server: ServerProcess;
  let m: string;
  let root: string;

  beforeAll(async () => {
    root = makeProjectDir("folder-budget");
    for (let i = 0; i < FOLDERS; i++) {
      mkdirAsAgent(path.join(root, `d${i}`));
      writeAsAgent(path.join(root, `d${i}`, "f.txt"), `v ${i}\n`);
    }
    server = await startServerProcess({ stateDir: makeTempDir("folder-budget-state"), openFileLimit: LIMIT });
    const project = await api<{ id: string }>(server, "POST", "/api/projects", {
      name: "budget",
      root,
      permissions: { write: true, terminal: false },
    });
    const session = await api<{ initUrl: string }>(server, "POST", "/api/sessions", { projectId: project.id });
    m = (await agentGet<{ bases: { m: string } }>(session.initUrl)).bases.m;
  });
  afterAll(killServerProcesses);

  it("refuses a patch over more folders than a quarter of the limit, naming the numbers, with nothing written", async () => {
    const before = snapshotTree(root);
    const refused = (answer: Body, folders: number) => {
      expect(answer).toMatchObject({
        ok: false,
        errorCode: "patch_too_large",
        retryable: false,
        agentAction: "correct_request",
        state: "failed",
      });
      expect(answer.errorDetail).toEqual({ folders, maxFolders: BUDGET, openFileLimit: LIMIT });
      expect(String(answer.repairHint)).toContain(`at most ${BUDGET} folders each`);
      expect(snapshotTree(root)).toEqual(before);
    };
    // One folder over, through the URL transport.
    refused(await agentGet<Body>(url(m, "a", [], patchOver(BUDGET + 1, "w"))), BUDGET + 1);
    // Far over (its text too long for a URL): over MCP. Before the budget this one ran out of descriptors mid-commit.
    const client = await connectMcpClient(server.dataUrl, tokenOfBase(m), { sdk: "v2" });
    try {
      const result = await client.callTool({ name: "patch", arguments: { patchText: patchOver(FOLDERS, "w") } });
      expect(result.isError).toBe(true);
      refused(result.structuredContent as Body, FOLDERS);
    } finally {
      await client.close();
    }
  });

  it("applies a patch over exactly the budget's folders, and the bridge keeps answering", async () => {
    const answer = await agentGet<Body>(url(m, "a", [], patchOver(BUDGET, "x")));
    expect(answer).toMatchObject({
      ok: true,
      summary: `${BUDGET} files: ${BUDGET} updated; +${BUDGET} -${BUDGET} lines`,
    });
    for (let i = 0; i < FOLDERS; i++)
      expect(fs.readFileSync(path.join(root, `d${i}`, "f.txt"), "utf8")).toBe(i < BUDGET ? `x ${i}\n` : `v ${i}\n`);
    expect(await agentGet<Body>(url(m, "r", [["path", `d${FOLDERS - 1}/f.txt`]]))).toMatchObject({ ok: true });
  });
});
