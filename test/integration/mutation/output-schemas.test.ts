// Every mutation tool's main answers on a real bridge, parsed strictly with the schemas MCP will publish: the
// wire answer with wireOutputOf(tool) (journaledOutput for intents), and the recorded execute result with
// tool.output. A field added, renamed or dropped on either side fails here.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { fingerprintBytes } from "../../../server/kernel/read/read-coverage.js";
import { mutationTools } from "../../../server/mutation/index.js";
import { pollFailure, wireOutputOf } from "../../../server/mutation/journal/envelope.js";
import { pollOutput } from "../../../server/mutation/journal/poll.js";
import { openStore } from "../../../server/store/index.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { patchText, url, writeFiles } from "./fixtures.js";
import { settle, type Body } from "./terminal-helpers.js";

const toolById = new Map(mutationTools.map((tool) => [tool.id, tool]));
/** The fields the journal adds to an execute result on the wire. */
const ENVELOPE = ["callId", "state", "dedupe", "repeat", "repeatHint"];
/** Added by the URL edge to any answer whose request's decoding was a guess (gateway/finish-call.ts): no tool's output. */
const EDGE_NOTICES = ["decoding"];

function issuesOf(schema: z.ZodType, value: unknown): unknown[] {
  const parsed = schema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues;
}

let t: TestBridge;
let s: AgentSession;
let m: string;

beforeAll(async () => {
  t = await startTestBridge();
  s = await t.session({ write: true, terminal: true });
  m = s.m!;
});

afterAll(async () => {
  await t.close();
});

/** The execute result the journal recorded for callId: exactly what the tool returned. */
function recorded(callId: string): Record<string, unknown> {
  const generation = t.bridge.store.sessions.get(s.sessionId)!.generation;
  const row = t.bridge.store.journal.find(s.sessionId, generation, callId);
  expect(row?.result).toBeDefined();
  return row!.result!;
}

/** GETs a journaled tool's URL; checks its wire answer and its recorded result against the tool's schemas. */
async function call(toolId: string, target: string): Promise<Body> {
  const tool = toolById.get(toolId)!;
  const answered = await agentGet<Body>(target);
  const body = Object.fromEntries(Object.entries(answered).filter(([k]) => !EDGE_NOTICES.includes(k))) as Body;
  expect(issuesOf(wireOutputOf(tool)!, body)).toEqual([]);
  if (tool.journal?.record === false) {
    expect(issuesOf(tool.output!, body)).toEqual([]);
    return body;
  }
  if (body.state === "succeeded") {
    const result = recorded(String(body.callId));
    expect(issuesOf(tool.output!, result)).toEqual([]);
    // The wire answer is the execute result plus the envelope, nothing else.
    expect(Object.fromEntries(Object.entries(body).filter(([k]) => !ENVELOPE.includes(k)))).toEqual(result);
  }
  return body;
}

const read = (file: string) => agentGet<Body>(url(s.r, "r", [["path", file]]));

describe("file tools", () => {
  it("write: a new file, its replay, an overwrite and an unchanged overwrite", async () => {
    const create = url(m, "w", [["path", "notes/new.txt"]], "one\n");
    expect(await call("write", create)).toMatchObject({
      ok: true,
      state: "succeeded",
      created: true,
      encoding: "utf-8",
      newline: "lf",
    });
    expect(await call("write", create)).toMatchObject({ created: true, dedupe: "replayed" });
    await read("notes/new.txt");
    expect(await call("write", url(m, "w", [["path", "notes/new.txt"]], "two\n"))).toMatchObject({
      created: false,
      bytes: 4,
    });
    await read("notes/new.txt");
    expect(
      await call(
        "write",
        url(
          m,
          "w",
          [
            ["path", "notes/new.txt"],
            ["run", "same"],
          ],
          "two\n",
        ),
      ),
    ).toMatchObject({ created: false, unchanged: true });
  });

  it("edit: single replacements, the third of which suggests a bulk patch", async () => {
    writeFiles(t.projectDir, { "edit.txt": "a = 1\r\nb = 2\r\nc = 3\r\n" });
    expect(
      await call(
        "edit",
        url(
          m,
          "e",
          [
            ["path", "edit.txt"],
            ["old", "a = 1"],
          ],
          "a = 10",
        ),
      ),
    ).toMatchObject({ line: 1, newline: "crlf", linesAdded: 1 });
    await call(
      "edit",
      url(
        m,
        "e",
        [
          ["path", "edit.txt"],
          ["old", "b = 2"],
        ],
        "b = 20",
      ),
    );
    expect(
      await call(
        "edit",
        url(
          m,
          "e",
          [
            ["path", "edit.txt"],
            ["old", "c = 3"],
          ],
          "c = 30\nd = 4",
        ),
      ),
    ).toMatchObject({ line: 3, linesAdded: 2, suggestedBulkPatch: true });
  });

  it("apply_patch: add, update (one hunk whitespace-tolerant), move and delete in one patch", async () => {
    writeFiles(t.projectDir, {
      "p/update.txt": "value = 1   \nkeep\n",
      "p/move.txt": "old\n",
      "p/delete.txt": "bye\n",
    });
    const patch = patchText(
      "*** Add File: p/added.txt",
      "+fresh",
      "*** Update File: p/update.txt",
      "@@",
      "-value = 1",
      "+value = 2",
      "*** Update File: p/move.txt",
      "*** Move to: p/moved.txt",
      "@@",
      "-old",
      "+new",
      "*** Delete File: p/delete.txt",
    );
    const body = await call("apply_patch", url(m, "a", [], patch));
    expect((body.files as Array<{ op: string }>).map((f) => f.op)).toEqual(["added", "updated", "moved", "deleted"]);
    expect(body.tolerantMatches).toEqual([
      { path: "/project/p/update.txt", hunk: 1, line: 1, match: "trailing_whitespace" },
    ]);
    expect(fs.readFileSync(path.join(t.projectDir, "p/moved.txt"), "utf8")).toBe("new\n");
  });
});

describe("staging", () => {
  it("stage: an incomplete chunk, a replayed one, the completing one; blob status of one blob and the list", async () => {
    const chunk = (i: number, text: string) =>
      url(
        m,
        "s",
        [
          ["blob", "big"],
          ["i", i],
          ["count", 2],
        ],
        text,
      );
    expect(await call("stage", chunk(0, "hello "))).toMatchObject({
      complete: false,
      missing: [1],
      deduplicated: false,
    });
    expect(await call("stage", chunk(0, "hello "))).toMatchObject({ deduplicated: true });
    expect(await call("stage", chunk(1, "world\n"))).toMatchObject({ complete: true, missing: [] });
    expect(await call("blob_status", url(m, "b", [["blob", "big"]]))).toMatchObject({
      received: [0, 1],
      preview: "hello ",
    });
    expect(await call("blob_status", url(m, "b"))).toMatchObject({ blobs: [{ blob: "big", count: 2 }] });
    expect(
      await call(
        "write",
        url(m, "w", [
          ["path", "staged.txt"],
          ["blob", "big"],
          ["count", 2],
        ]),
      ),
    ).toMatchObject({ created: true, bytes: 12 });
  });
});

describe("terminal", () => {
  it("foreground: success, a non-zero exit, and a replay after the project changed offers repeat", async () => {
    const echo = url(m, "x", [], "echo hi");
    expect(await call("terminal", echo)).toMatchObject({
      mode: "foreground",
      exitCode: 0,
      stdout: "hi\n",
      cwd: "/project",
    });
    expect(await call("terminal", url(m, "x", [], "echo out; echo err >&2; exit 3"))).toMatchObject({
      exitCode: 3,
      stderr: "err\n",
    });
    await call("write", url(m, "w", [["path", "epoch.txt"]], "bump"));
    expect(await call("terminal", echo)).toMatchObject({
      dedupe: "replayed",
      repeat: expect.any(String),
      repeatHint: expect.any(String),
    });
  });

  it("bg=1 start, then its stop URL", async () => {
    const started = await call("terminal", url(m, "x", [["bg", 1]], "echo 'listening on port 4321'; exec sleep 30"));
    expect(started).toMatchObject({
      mode: "background",
      processState: "running",
      startup: "announced",
      detectedPorts: [4321],
    });
    expect(await call("terminal", String(started.stop))).toMatchObject({
      mode: "stop",
      pid: started.pid,
      stopped: true,
    });
  });

  it("an unfinished answer with poll, a join, /j of the running intent and of the finished one", async () => {
    const slow = url(m, "x", [["wait", 0]], "sleep 1; echo done");
    const accepted = await call("terminal", slow);
    expect(accepted).toMatchObject({ agentAction: "poll", poll: expect.any(String) });
    expect(["pending", "running"]).toContain(accepted.state);
    expect(await call("terminal", slow)).toMatchObject({ dedupe: "joined", callId: accepted.callId });

    const running = await agentGet<Body>(
      url(m, "j", [
        ["call", String(accepted.callId)],
        ["wait", 0],
      ]),
    );
    expect(running).toMatchObject({ tool: "terminal", agentAction: "poll" });
    expect(issuesOf(pollOutput, running)).toEqual([]);

    const finished = await settle(String(accepted.poll));
    expect(finished).toMatchObject({ ok: true, state: "succeeded", tool: "terminal", stdout: "done\n" });
    expect(issuesOf(pollOutput, finished)).toEqual([]);
    // Recorded by now: /j answers from the journal, not the flight.
    expect(issuesOf(pollOutput, await agentGet<Body>(url(m, "j", [["call", String(accepted.callId)]])))).toEqual([]);
  });

  it("/j of a failed intent answers ok:false, described by pollFailure", async () => {
    const failed = await agentGet<Body>(
      url(
        m,
        "e",
        [
          ["path", "missing.txt"],
          ["old", "x"],
        ],
        "y",
      ),
    );
    expect(failed).toMatchObject({ ok: false, state: "failed" });
    const polled = await agentGet<Body>(url(m, "j", [["call", String(failed.callId)]]));
    expect(polled).toMatchObject({ ok: false, tool: "edit" });
    expect(issuesOf(pollFailure, polled)).toEqual([]);
  });
});

describe("after a restart", () => {
  it("/j of a write that recovery found landed answers recovery's body", async () => {
    const first = await startTestBridge();
    const session = await first.session({ write: true });
    const root = first.projectDir;
    const stateDir = first.stateDir;
    const oldData = first.bridge.dataUrl;
    await first.close();

    writeAsAgent(path.join(root, "landed.txt"), "new");
    const store = openStore(stateDir);
    try {
      const generation = store.sessions.get(session.sessionId)!.generation;
      const { row } = store.journal.admit({
        sessionId: session.sessionId,
        generation,
        projectId: session.projectId,
        projectRoot: root,
        callId: "w-landed",
        tool: "write",
        argsHash: "h",
        createdAt: Date.now(),
      });
      store.journal.markRunning(row.id, Date.now());
      store.journal.saveCheckpoint(row.id, {
        path: path.join(root, "landed.txt"),
        before: null,
        after: fingerprintBytes(Buffer.from("new")),
      });
    } finally {
      store.close();
    }

    const second = await startTestBridge({}, { stateDir });
    try {
      const polled = await agentGet<Body>(
        url(session.m!.replace(oldData, second.bridge.dataUrl), "j", [["call", "w-landed"]]),
      );
      expect(polled).toMatchObject({
        ok: true,
        state: "succeeded",
        recovered: true,
        path: "/project/landed.txt",
        tool: "write",
      });
      expect(issuesOf(pollOutput, polled)).toEqual([]);
    } finally {
      await second.close();
    }
  });
});
