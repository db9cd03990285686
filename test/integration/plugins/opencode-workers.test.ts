// The OpenCode Control plugin against a real `opencode serve` 1.18.33 driven by a stand-in LLM provider: workers
// started, waited on and read by exact identity; replays admitting one prompt; an unanswered prompt reconciled,
// never re-sent; tool ceilings seen in what OpenCode offered the model; a permission wall answered; sessions
// outside the root invisible; a swarm of three. Skips (saying how to install) without the binary, fails in CI.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApi } from "../../../plugins/opencode-control/api.js";
import { createOpenCodeClient } from "../../../plugins/opencode-control/client.js";
import { ascendingMessageId } from "../../../plugins/opencode-control/ids.js";
import { createOpenCodePlugin } from "../../../plugins/opencode-control/index.js";
import { journalOf } from "../../../plugins/opencode-control/tools/common.js";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { startMockProvider, type MockProvider } from "../../helpers/mock-provider.js";
import {
  locateOpencode,
  opencodeRequest,
  startOpencodeServe,
  type OpencodeServe,
} from "../../helpers/opencode-serve.js";
import { url } from "../mutation/fixtures.js";

const located = locateOpencode();
/** CI names the binary explicitly (.ci/run): there a missing OpenCode fails; elsewhere the suite skips, saying why. */
const required = Boolean(process.env.URLBRIDGE_OPENCODE_BIN);
if ("missing" in located && !required) process.stderr.write(`opencode-workers.test.ts skipped: ${located.missing}\n`);

const PASSWORD = "urlbridge-it-opencode-0123456789";
/** Bounded loops: each wait answers within its timeoutMs; a turn of the stand-in takes well under a second. */
const MAX_POLLS = 8;

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; repair?: string };
interface WorkerBody extends Body {
  worker: {
    sessionId: string;
    messageId: string;
    state: string;
    admission?: string;
    requests?: Array<{ kind: string; id: string }>;
    poll?: string;
    assistantMessageId?: string;
  };
  result?: { text: string; assistantMessageId: string; finish: string };
  waitUrl?: string;
}

const k = (base: string, tool: string, args: unknown, extra: Array<[string, string | number]> = []) =>
  url(base, "k", [["plugin", "opencode-control"], ["tool", tool], ...extra], JSON.stringify(args));

describe.skipIf("missing" in located && !required)("OpenCode Control against a real opencode serve", () => {
  let provider: MockProvider;
  let oc: OpencodeServe;
  let t: TestBridge;
  let full: AgentSession;
  let writeOnly: AgentSession;
  let terminalOnly: AgentSession;
  let readOnly: AgentSession;
  let direct: ReturnType<typeof opencodeRequest>;

  /** Follows a worker's poll URL until it is no longer running (bounded). */
  async function settle(waitUrl: string): Promise<WorkerBody> {
    let body = await agentGet<WorkerBody>(waitUrl);
    for (
      let i = 0;
      i < MAX_POLLS && body.ok && ["running", "queued"].includes(body.worker.state) && body.worker.poll;
      i++
    )
      body = await agentGet<WorkerBody>(body.worker.poll);
    return body;
  }

  /** A mutation URL's answer once its intent has finished: follows the journal's poll URL (bounded). */
  async function mutate<T extends Body = WorkerBody>(mutationUrl: string): Promise<T> {
    let body = await agentGet<T>(mutationUrl);
    for (
      let i = 0;
      i < MAX_POLLS && ["pending", "running"].includes(String(body.state)) && typeof body.poll === "string";
      i++
    )
      body = await agentGet<T>(body.poll);
    return body;
  }

  async function start(s: AgentSession, prompt: string, extra: Record<string, unknown> = {}): Promise<WorkerBody> {
    return mutate(k(s.m!, "opencode_worker", { action: "start", prompt, ...extra }, [["wait", 1500]]));
  }

  /** User messages OpenCode holds whose text contains `marker`, over every session of the project. */
  async function userMessages(marker: string): Promise<number> {
    const sessions = await direct<Array<{ id: string }>>(
      "GET",
      `/session?directory=${encodeURIComponent(t.projectDir)}`,
    );
    let n = 0;
    for (const s of sessions) {
      const messages = await direct<Array<{ info: { role: string }; parts: Array<{ type: string; text?: string }> }>>(
        "GET",
        `/session/${s.id}/message?directory=${encodeURIComponent(t.projectDir)}`,
      );
      n += messages.filter((m) => m.info.role === "user" && m.parts.some((p) => p.text?.includes(marker))).length;
    }
    return n;
  }

  beforeAll(async () => {
    if ("missing" in located) throw new Error(located.missing);
    provider = await startMockProvider();
    const home = makeTempDir("oc-home");
    oc = await startOpencodeServe({
      bin: located.bin,
      homeDir: home,
      cwd: home,
      providerBaseURL: provider.baseURL,
      password: PASSWORD,
      permission: { bash: "ask" },
    });
    direct = opencodeRequest(oc.url, PASSWORD);
    t = await startTestBridge(
      {},
      {
        plugins: [
          createOpenCodePlugin({
            url: oc.url,
            username: "opencode",
            password: PASSWORD,
            allowExisting: true,
            allowNested: false,
            maxWorkers: 8,
          }),
        ],
      },
    );
    fs.writeFileSync(path.join(t.projectDir, "README.md"), "a project\n");
    full = await t.session({ write: true, terminal: true });
    writeOnly = await t.session({ write: true, terminal: false });
    terminalOnly = await t.session({ write: false, terminal: true });
    readOnly = await t.session({ write: false, terminal: false });
  }, 90_000);

  afterAll(async () => {
    await t?.close();
    await oc?.stop();
    await provider?.close();
  });

  it("lists the plugin and its four tools, read and mutation actions classified, with full schemas", async () => {
    const list = await agentGet<
      Body & { plugins: Array<{ id: string; toolCount: number; status: { state: string } }> }
    >(`${full.r}/k`);
    expect(list.plugins).toEqual([
      expect.objectContaining({
        id: "opencode-control",
        toolCount: 4,
        status: expect.objectContaining({ state: "ready" }),
      }),
    ]);
    const described = await agentGet<
      Body & {
        tools: Array<{ id: string; mutationActions?: string[]; inputSchema: { properties: Record<string, unknown> } }>;
      }
    >(`${full.r}/k?plugin=opencode-control`);
    const byId = Object.fromEntries(described.tools.map((tool) => [tool.id, tool]));
    expect(Object.keys(byId).sort()).toEqual([
      "opencode_info",
      "opencode_request",
      "opencode_session",
      "opencode_worker",
    ]);
    expect(byId.opencode_worker!.mutationActions).toEqual([
      "start",
      "continue",
      "cancel",
      "swarm_start",
      "swarm_continue",
      "swarm_cancel",
    ]);
    expect(byId.opencode_worker!.inputSchema.properties).toHaveProperty("action");
    // A mutation action on the read base, and a read action on the mutation base, repair to the other base.
    const wrong = await agentGet<Body>(k(full.r, "opencode_worker", { action: "start", prompt: "x" }));
    expect(wrong).toMatchObject({ ok: false, errorCode: "wrong_capability_base" });
    expect(wrong.repair).toContain(full.m!);
    const back = await agentGet<Body>(k(full.m!, "opencode_worker", { action: "list" }));
    expect(back).toMatchObject({ ok: false, errorCode: "wrong_capability_base" });
    expect(back.repair).toContain(full.r);
  });

  it("starts a worker, waits on it and reads its result by exact identity", async () => {
    const started = await start(full, "Summarise the README please");
    expect(started).toMatchObject({ ok: true, state: "succeeded", worker: { admission: "admitted" } });
    const { sessionId, messageId } = started.worker;
    expect(messageId).toMatch(/^msg_[0-9a-f]{12}[0-9A-Za-z]{14}$/);
    const done = await settle(started.waitUrl!);
    expect(done).toMatchObject({ ok: true, worker: { sessionId, messageId, state: "completed", finish: "stop" } });
    expect(done.result!.text).toBe("MOCK-REPLY to: Summarise the README please");
    // The result is the assistant message whose parentID is our message id, as OpenCode itself records it.
    const messages = await direct<Array<{ info: { id: string; role: string; parentID?: string } }>>(
      "GET",
      `/session/${sessionId}/message?directory=${encodeURIComponent(t.projectDir)}`,
    );
    const answers = messages.filter((m) => m.info.role === "assistant" && m.info.parentID === messageId);
    expect(answers.at(-1)!.info.id).toBe(done.result!.assistantMessageId);
    // The worker is tagged as urlbridge's and sits under a urlbridge group session.
    const info = await direct<{
      parentID?: string;
      metadata?: { urlbridge?: { kind: string } };
      permission?: Array<{ permission: string; action: string }>;
    }>("GET", `/session/${sessionId}?directory=${encodeURIComponent(t.projectDir)}`);
    expect(info.metadata?.urlbridge?.kind).toBe("worker");
    const group = await direct<{ metadata?: { urlbridge?: { kind: string } } }>(
      "GET",
      `/session/${info.parentID}?directory=${encodeURIComponent(t.projectDir)}`,
    );
    expect(group.metadata?.urlbridge?.kind).toBe("group");
    expect(info.permission).toEqual(
      expect.arrayContaining([
        { permission: "external_directory", pattern: "*", action: "deny" },
        { permission: "task", pattern: "*", action: "deny" },
      ]),
    );
    // result reads the same identity again without waiting; list shows the worker.
    expect(await agentGet(k(full.r, "opencode_worker", { action: "result", sessionId, messageId }))).toMatchObject({
      ok: true,
      worker: { state: "completed" },
      result: { text: done.result!.text },
    });
    const list = await agentGet<Body & { workers: Array<{ sessionId: string }> }>(
      k(full.r, "opencode_worker", { action: "list" }),
    );
    expect(list.workers.map((w) => w.sessionId)).toContain(sessionId);
    // The session's messages: previews in order, and one message in full by id.
    const listed = await agentGet<
      Body & { messages: Array<{ id: string; role: string; parentId?: string; preview: string }> }
    >(k(full.r, "opencode_session", { action: "messages", sessionId }));
    expect(listed.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(listed.messages[0]).toMatchObject({ id: messageId, preview: "Summarise the README please" });
    expect(listed.messages[1]).toMatchObject({ id: done.result!.assistantMessageId, parentId: messageId });
    expect(
      await agentGet(
        k(full.r, "opencode_session", { action: "messages", sessionId, messageId: done.result!.assistantMessageId }),
      ),
    ).toMatchObject({
      ok: true,
      message: { role: "assistant", text: done.result!.text, textComplete: true },
    });
  });

  it("admits one prompt when the same start URL is fetched twice, or ten times concurrently", async () => {
    const twice = k(full.m!, "opencode_worker", { action: "start", prompt: "replay-once-A" }, [["wait", 1500]]);
    const first = await mutate<WorkerBody>(twice);
    const second = await mutate<WorkerBody>(twice);
    expect(second).toMatchObject({
      ok: true,
      dedupe: "replayed",
      callId: first.callId,
      worker: { sessionId: first.worker.sessionId, messageId: first.worker.messageId },
    });
    const burstUrl = k(full.m!, "opencode_worker", { action: "start", prompt: "replay-burst-B" }, [["wait", 1500]]);
    const burst = await Promise.all(Array.from({ length: 10 }, () => mutate<WorkerBody>(burstUrl)));
    expect(burst.every((b) => b.ok)).toBe(true);
    expect(new Set(burst.map((b) => b.callId)).size).toBe(1);
    expect(new Set(burst.map((b) => b.worker.messageId)).size).toBe(1);
    await settle(first.waitUrl!);
    await settle(burst[0]!.waitUrl!);
    expect(await userMessages("replay-once-A")).toBe(1);
    expect(await userMessages("replay-burst-B")).toBe(1);
    expect(provider.requestsFor("replay-burst-B").filter((r) => r.tools.length > 0)).toHaveLength(1);
  });

  it("reconciles a prompt whose answer never came instead of sending it again", async () => {
    const startUrl = k(full.m!, "opencode_worker", { action: "start", prompt: "HOLD:r1 reconcile me" }, [
      ["wait", 1500],
    ]);
    const started = await mutate<WorkerBody>(startUrl);
    const { sessionId, messageId } = started.worker;
    // The bounded wait answers "running" with the exact poll URL; it does not hang.
    const waited = await agentGet<WorkerBody>(
      k(full.r, "opencode_worker", { action: "wait", sessionId, messageId, timeoutMs: 1500 }),
    );
    expect(waited).toMatchObject({ ok: true, worker: { state: "running" } });
    expect(waited.worker.poll).toContain(messageId);
    // Fetching the start URL again replays the admission; continuing the busy worker is refused, nothing is sent.
    expect(await mutate(startUrl)).toMatchObject({ ok: true, dedupe: "replayed", worker: { sessionId, messageId } });
    const busy = await mutate<Body & { wait?: string }>(
      k(full.m!, "opencode_worker", { action: "continue", sessionId, prompt: "are you there?" }, [["wait", 1500]]),
    );
    expect(busy).toMatchObject({ ok: false, errorCode: "opencode_busy", retryable: true });
    expect(busy.wait).toContain(messageId);
    expect(await userMessages("HOLD:r1")).toBe(1);
    expect(await userMessages("are you there?")).toBe(0);
    expect(provider.requestsFor("HOLD:r1").filter((r) => r.tools.length > 0)).toHaveLength(1);
    provider.release("r1");
    const done = await settle(waited.worker.poll!);
    expect(done).toMatchObject({
      worker: { sessionId, messageId, state: "completed" },
      result: { text: "MOCK-RELEASED r1" },
    });
    expect(provider.requestsFor("HOLD:r1").filter((r) => r.tools.length > 0)).toHaveLength(1);
  });

  it("gives a read-only project a worker that is offered neither bash nor edit", async () => {
    // The plugin's mutations are open to read-only sessions: Init lists a mutation base, with no native mutation.
    expect(readOnly.init.bases.m).toBeDefined();
    expect(Object.values(readOnly.init.ep as Record<string, [string, string]>).filter(([ref]) => ref === "m")).toEqual(
      [],
    );
    expect(await agentGet(url(readOnly.m!, "w", [["path", "x.txt"]], "x"))).toMatchObject({
      ok: false,
      errorCode: "tool_not_enabled",
    });
    // Such a session has no /j: an unfinished answer polls the call's own URL, which joins the same intent.
    const unfinishedUrl = k(readOnly.m!, "opencode_worker", { action: "start", prompt: "tools-probe-readOnly" }, [
      ["wait", 0],
    ]);
    const unfinished = await agentGet<Body & { poll?: string }>(unfinishedUrl);
    expect(unfinished).toMatchObject({ ok: true, state: expect.stringMatching(/^(pending|running)$/) });
    expect(unfinished.poll).toBe(
      k(readOnly.m!, "opencode_worker", { action: "start", prompt: "tools-probe-readOnly" }, [["wait", 1000]]),
    );
    const started = await mutate(unfinishedUrl);
    expect(started).toMatchObject({ ok: true, state: "succeeded", worker: { admission: "admitted" } });
    expect((await settle(started.waitUrl!)).worker.state).toBe("completed");
    const offered = provider.requestsFor("tools-probe-readOnly").find((r) => r.tools.length > 0)!.tools;
    expect(offered).toEqual(expect.arrayContaining(["read", "grep", "glob"]));
    expect(
      offered.filter((name) => ["bash", "edit", "write", "apply_patch", "patch", "multiedit", "task"].includes(name)),
    ).toEqual([]);
    // Prompting a session urlbridge did not make stays out of reach.
    const other = await direct<{ id: string }>("POST", `/session?directory=${encodeURIComponent(t.projectDir)}`, {
      title: "not ours",
    });
    expect(
      await mutate(
        k(readOnly.m!, "opencode_session", { action: "send", sessionId: other.id, prompt: "hi" }, [["wait", 1500]]),
      ),
    ).toMatchObject({ ok: false, errorCode: "opencode_refused" });
  });

  it("settles an admission a killed bridge left unfinished by reading the exact message, never by sending it", async () => {
    const started = await start(full, "recover-me");
    await settle(started.waitUrl!);
    const api = createApi(
      createOpenCodeClient({
        url: oc.url,
        username: "opencode",
        password: PASSWORD,
        allowExisting: true,
        allowNested: false,
        maxWorkers: 8,
      }),
    );
    const interrupted = (messageId: string) => ({
      callId: "auto:opencode-control.opencode_worker:0123456789abcdef",
      tool: "opencode-control.opencode_worker",
      phase: "running" as const,
      projectRoot: t.projectDir,
      checkpoint: { directory: t.projectDir, sessionId: started.worker.sessionId, messageId },
      rollback: async () => ({ restored: [], removed: [] }),
    });
    const { recover } = journalOf(api);
    expect(await recover(interrupted(started.worker.messageId))).toMatchObject({
      ok: true,
      admission: "admitted",
      messageId: started.worker.messageId,
    });
    const never = ascendingMessageId();
    expect(await recover(interrupted(never))).toMatchObject({ ok: true, admission: "not-admitted", messageId: never });
    // Reading back sent nothing: the session still holds exactly the one prompt.
    expect(await userMessages("recover-me")).toBe(1);
    const messages = await direct<Array<{ info: { id: string } }>>(
      "GET",
      `/session/${started.worker.sessionId}/message?directory=${encodeURIComponent(t.projectDir)}`,
    );
    expect(messages.map((m) => m.info.id)).not.toContain(never);
  });

  it("offers a worker neither edit nor write without the write permission, and no bash without terminal", async () => {
    const noWrite = await settle((await start(terminalOnly, "tools-probe-noWrite")).waitUrl!);
    expect(noWrite.worker.state).toBe("completed");
    const noTerminal = await settle((await start(writeOnly, "tools-probe-noTerminal")).waitUrl!);
    expect(noTerminal.worker.state).toBe("completed");
    const offered = (marker: string) => provider.requestsFor(marker).find((r) => r.tools.length > 0)!.tools;
    expect(offered("tools-probe-noWrite")).toContain("bash");
    expect(offered("tools-probe-noWrite")).not.toEqual(expect.arrayContaining(["edit"]));
    expect(
      offered("tools-probe-noWrite").filter((name) =>
        ["edit", "write", "apply_patch", "patch", "multiedit", "task"].includes(name),
      ),
    ).toEqual([]);
    expect(offered("tools-probe-noTerminal")).toContain("edit");
    expect(offered("tools-probe-noTerminal").filter((name) => ["bash", "task"].includes(name))).toEqual([]);
    // And with both, the full set (minus nested tasks, which stay off by default).
    const both = await settle((await start(full, "tools-probe-both")).waitUrl!);
    expect(both.worker.state).toBe("completed");
    expect(offered("tools-probe-both")).toEqual(expect.arrayContaining(["bash", "edit", "read"]));
    expect(offered("tools-probe-both")).not.toContain("task");
  });

  it("lists a worker's permission wall and answers it through opencode_request", async () => {
    const started = await start(full, 'TOOLCALL:bash {"command":"echo wall-ok","description":"Prints wall-ok"}');
    const blocked = await settle(started.waitUrl!);
    expect(blocked).toMatchObject({ ok: true, worker: { state: "blocked" } });
    const requestId = blocked.worker.requests![0]!.id;
    const listed = await agentGet<
      Body & { permissions: Array<{ requestId: string; sessionId: string; permission: string }> }
    >(k(full.r, "opencode_request", { action: "list" }));
    expect(listed.permissions).toContainEqual(
      expect.objectContaining({ requestId, sessionId: started.worker.sessionId, permission: "bash" }),
    );
    // A session without terminal may not let the worker's shell run.
    expect(
      await mutate(
        k(writeOnly.m!, "opencode_request", { action: "reply_permission", requestId, reply: "once" }, [["wait", 1500]]),
      ),
    ).toMatchObject({ ok: false, errorCode: "opencode_refused" });
    expect(
      await mutate(
        k(full.m!, "opencode_request", { action: "reply_permission", requestId, reply: "once" }, [["wait", 1500]]),
      ),
    ).toMatchObject({ ok: true, state: "succeeded", reply: "once" });
    const done = await settle(started.waitUrl!);
    expect(done.worker.state).toBe("completed");
    expect(done.result!.text).toContain("MOCK-DONE tool said");
    expect(done.result!.text).toContain("wall-ok");
    const after = await agentGet<Body & { permissions: unknown[] }>(k(full.r, "opencode_request", { action: "list" }));
    expect(after.permissions).toEqual([]);
  });

  it("cancels a blocked worker and rejects the permission request its abort leaves behind", async () => {
    const started = await start(full, 'TOOLCALL:bash {"command":"echo never","description":"Prints never"}');
    const blocked = await settle(started.waitUrl!);
    expect(blocked.worker.state).toBe("blocked");
    const cancelled = await mutate<Body & { aborted: boolean; rejected: { permissions: number } }>(
      k(full.m!, "opencode_worker", { action: "cancel", sessionId: started.worker.sessionId }, [["wait", 1500]]),
    );
    expect(cancelled).toMatchObject({ ok: true, rejected: { permissions: 1, questions: 0 } });
    const pending = await direct<Array<{ sessionID: string }>>(
      "GET",
      `/permission?directory=${encodeURIComponent(t.projectDir)}`,
    );
    expect(pending.filter((p) => p.sessionID === started.worker.sessionId)).toEqual([]);
    const after = await settle(started.waitUrl!);
    expect(["aborted", "failed", "incomplete"]).toContain(after.worker.state);
    // The shell never ran: no completion ever carried its result.
    expect(provider.requestsFor("echo never").filter((r) => r.answer.startsWith("MOCK-DONE"))).toEqual([]);
  });

  it("reads the provider catalogue and the limits through opencode_info", async () => {
    expect(await agentGet(k(full.r, "opencode_info", { action: "models" }))).toMatchObject({
      ok: true,
      models: [{ model: "mock/mock-model", name: "Mock Model", context: 128000, output: 4096 }],
    });
    expect(await agentGet(k(full.r, "opencode_info", { action: "limits" }))).toMatchObject({
      ok: true,
      maxWorkers: 8,
      waitMaxMs: 45000,
    });
    expect(await agentGet(k(full.r, "opencode_info", { action: "capabilities" }))).toMatchObject({
      ok: true,
      permissions: { write: true, terminal: true },
      settings: { allowNested: false },
    });
  });

  it("never shows an existing session outside the root, and guards prompting one inside it", async () => {
    const outside = makeTempDir("oc-outside");
    const foreign = await direct<{ id: string }>("POST", `/session?directory=${encodeURIComponent(outside)}`, {
      title: "outside the root",
    });
    const inside = await direct<{ id: string }>("POST", `/session?directory=${encodeURIComponent(t.projectDir)}`, {
      title: "someone else's, inside",
    });
    const list = await agentGet<Body & { sessions: Array<{ sessionId: string; owner: string }> }>(
      k(full.r, "opencode_session", { action: "list", limit: 50 }),
    );
    const ids = list.sessions.map((s) => s.sessionId);
    expect(ids).not.toContain(foreign.id);
    expect(list.sessions).toContainEqual(expect.objectContaining({ sessionId: inside.id, owner: "external" }));
    for (const action of ["get", "messages", "children"]) {
      expect(await agentGet(k(full.r, "opencode_session", { action, sessionId: foreign.id }))).toMatchObject({
        ok: false,
        errorCode: "opencode_not_found",
      });
    }
    expect(
      await mutate(k(full.m!, "opencode_session", { action: "abort", sessionId: foreign.id }, [["wait", 1500]])),
    ).toMatchObject({ ok: false, errorCode: "opencode_not_found" });
    // Prompting someone else's session needs both write and terminal; abort is always allowed.
    expect(
      await mutate(
        k(writeOnly.m!, "opencode_session", { action: "send", sessionId: inside.id, prompt: "hello there" }, [
          ["wait", 1500],
        ]),
      ),
    ).toMatchObject({ ok: false, errorCode: "opencode_refused" });
    expect(
      await mutate(k(writeOnly.m!, "opencode_session", { action: "abort", sessionId: inside.id }, [["wait", 1500]])),
    ).toMatchObject({ ok: true, sessionId: inside.id });
    const sent = await mutate<Body & { waitUrl: string; messageId: string }>(
      k(full.m!, "opencode_session", { action: "send", sessionId: inside.id, prompt: "existing-send" }, [
        ["wait", 1500],
      ]),
    );
    expect(sent).toMatchObject({ ok: true, admission: "admitted" });
    expect(await settle(sent.waitUrl)).toMatchObject({
      worker: { state: "completed" },
      result: { text: "MOCK-REPLY to: existing-send" },
    });
  });

  it("pages the session list with a fingerprint that refuses a changed list", async () => {
    const first = await agentGet<
      Body & { page: { fingerprint: string; total: number; nextOffset?: number }; next?: string }
    >(k(full.r, "opencode_session", { action: "list", limit: 1 }));
    expect(first.page.total).toBeGreaterThan(1);
    expect(first.next).toBeDefined();
    await direct("POST", `/session?directory=${encodeURIComponent(t.projectDir)}`, { title: "changes the list" });
    expect(await agentGet(first.next!)).toMatchObject({ ok: false, errorCode: "page_changed" });
  });

  it("runs a swarm of three workers to completion", async () => {
    const started = await mutate<
      Body & { swarm: { swarmId: string; workers: Array<{ sessionId: string; messageId: string }> }; waitUrl: string }
    >(
      k(
        full.m!,
        "opencode_worker",
        {
          action: "swarm_start",
          title: "three",
          workers: [{ prompt: "swarm-one" }, { prompt: "swarm-two" }, { prompt: "swarm-three" }],
        },
        [["wait", 1500]],
      ),
    );
    expect(started).toMatchObject({ ok: true, state: "succeeded" });
    expect(started.swarm.workers).toHaveLength(3);
    let body = await agentGet<
      Body & {
        swarm: {
          done: boolean;
          counts: Record<string, number>;
          poll?: string;
          workers: Array<{ sessionId: string; messageId: string; state: string }>;
        };
      }
    >(started.waitUrl);
    for (let i = 0; i < MAX_POLLS && !body.swarm.done && body.swarm.poll; i++) body = await agentGet(body.swarm.poll);
    expect(body.swarm).toMatchObject({ done: true, counts: { completed: 3 } });
    for (const [i, w] of started.swarm.workers.entries()) {
      const r = await agentGet<WorkerBody>(
        k(full.r, "opencode_worker", { action: "result", sessionId: w.sessionId, messageId: w.messageId }),
      );
      expect(r.result!.text).toBe(`MOCK-REPLY to: swarm-${["one", "two", "three"][i]}`);
    }
    const swarms = await agentGet<Body & { swarms: Array<{ sessionId: string }> }>(
      k(full.r, "opencode_worker", { action: "swarm_list" }),
    );
    expect(swarms.swarms.map((s) => s.sessionId)).toContain(started.swarm.swarmId);
    // One follow-up to every member: new identities in the same sessions, each answered.
    const swarmId = started.swarm.swarmId;
    const continued = await mutate<
      Body & { swarm: { workers: Array<{ sessionId: string; messageId: string }> }; waitUrl: string }
    >(k(full.m!, "opencode_worker", { action: "swarm_continue", swarmId, prompt: "swarm-again" }, [["wait", 1500]]));
    expect(continued.swarm.workers.map((w) => w.sessionId).sort()).toEqual(
      started.swarm.workers.map((w) => w.sessionId).sort(),
    );
    let again = await agentGet<typeof body>(continued.waitUrl);
    for (let i = 0; i < MAX_POLLS && !again.swarm.done && again.swarm.poll; i++)
      again = await agentGet(again.swarm.poll);
    expect(again.swarm).toMatchObject({ done: true, counts: { completed: 3 } });
    expect(again.swarm.workers.map((w) => w.messageId).sort()).toEqual(
      continued.swarm.workers.map((w) => w.messageId).sort(),
    );
    expect(
      await mutate(k(full.m!, "opencode_worker", { action: "swarm_cancel", swarmId }, [["wait", 1500]])),
    ).toMatchObject({ ok: true, swarm: { swarmId } });
  });
});
