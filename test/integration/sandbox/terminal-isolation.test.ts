// Issue 10 items 2-4 through the data plane, as root (CI): a terminal-enabled session's /x cannot read the
// state dir, the bridge's environment or another project, cannot write outside its project or signal the
// bridge, and nothing it starts (setsid'd or double-forked daemons included) outlives its timeout, its
// session, its project, its terminal permission or the bridge.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeLauncher } from "../../../server/sandbox/launcher.js";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import {
  agentGet,
  makeTempDir,
  startTestBridge,
  TEST_AGENT_UID,
  type AgentSession,
  type TestBridge,
} from "../../helpers/bridge.js";
import { settle, waitUntil, type Body } from "../mutation/terminal-helpers.js";
import { git, makeRepository } from "../../helpers/git-repo.js";

const landlock = (probeLauncher()?.landlock ?? 0) > 0;
const asRoot = process.getuid?.() === 0;

/** Processes whose command line holds `marker` (read through /proc, as the issue's must-show asks). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, "utf8");
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      if (cmdline.includes(marker) && !/\) Z /.test(stat)) found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

let markers = 0;
/** A unique `sleep` duration: it is the marker in the daemon's command line. */
const marker = () => `4${process.pid % 1000}${++markers}.5`;
/** Starts a setsid'd daemon and a double-forked one, both carrying the marker, and returns at once. */
const daemons = (m: string) =>
  `setsid -f sleep ${m} >/dev/null 2>&1; (sh -c "sleep ${m} >/dev/null 2>&1 &" &); echo started`;

let t: TestBridge;
let other: string;

const x = (s: AgentSession, command: string, query = "") => settle(`${s.m}/x?${query}raw=${encodeUrlText(command)}`);

beforeAll(async () => {
  t = await startTestBridge();
  fs.writeFileSync(path.join(t.stateDir, "operator-token"), "a-token-the-terminal-must-not-read\n", { mode: 0o600 });
  other = makeTempDir("other-project");
  fs.writeFileSync(path.join(other, "secret.txt"), "project B's secret\n");
});
afterAll(async () => t.close());

describe.skipIf(!landlock)("terminal isolation (Landlock)", () => {
  let s: AgentSession;
  beforeAll(async () => {
    s = await t.session({ terminal: true, write: true });
    await t.session({ terminal: true, root: other, name: "other" });
  });

  it.each([
    ["the state dir listing", () => `ls ${t.stateDir}`],
    ["the operator-token file", () => `cat ${t.stateDir}/operator-token`],
    [
      "the state database",
      () => `cat ${t.stateDir}/*.db* | head -c 100 | od -c | head -1; test -r ${t.stateDir}/state.db`,
    ],
    ["the bridge's environment", () => `tr "\\0" "\\n" < /proc/${process.pid}/environ`],
    ["the bridge's memory maps", () => `cat /proc/${process.pid}/maps`],
    ["another project's files", () => `cat ${other}/secret.txt`],
  ])("cannot read %s", async (_name, command) => {
    const body = await x(s, command());
    expect(body.ok).toBe(true);
    expect(body.exitCode).not.toBe(0);
    expect(String(body.stdout)).not.toContain("a-token-the-terminal-must-not-read");
    expect(String(body.stdout)).not.toContain("project B's secret");
    expect(String(body.stdout)).not.toContain("URLBRIDGE_");
    expect(String(body.stderr)).toMatch(/Permission denied|Operation not permitted/);
  });

  // The same reads from a pty=1 process (issue 29): the terminal changes how it is driven, not what it may reach.
  it.each([
    ["the operator-token file", () => `cat ${t.stateDir}/operator-token`],
    ["the bridge's environment", () => `tr "\\0" "\\n" < /proc/${process.pid}/environ`],
    ["another project's files", () => `cat ${other}/secret.txt`],
  ])("cannot read %s from a pty=1 process either", async (_name, command) => {
    const body = await x(s, `${command()}; echo "status=$? uid=$(id -u)"; sleep 30`, "pty=1&");
    expect(body, JSON.stringify(body)).toMatchObject({ ok: true, mode: "pty" });
    const screen = String(body.screen);
    expect(screen).toMatch(/status=[1-9]/);
    if (asRoot) expect(screen).toContain(`uid=${TEST_AGENT_UID}`);
    expect(screen).not.toContain("a-token-the-terminal-must-not-read");
    expect(screen).not.toContain("project B's secret");
    expect(screen).not.toContain("URLBRIDGE_");
    expect(screen).toMatch(/Permission denied|Operation not permitted/);
    await settle(`${s.m}/x?stop=${String(body.pid)}`);
  });

  it("cannot write outside its project, into another project or the state dir", async () => {
    const outside = path.join(path.dirname(t.projectDir), `urlbridge-outside-${process.pid}`);
    const body = await x(
      s,
      `touch ${outside}; echo x > ${other}/planted.txt; echo x > ${t.stateDir}/planted; touch inside.txt`,
    );
    expect(body.exitCode).toBe(0);
    expect(String(body.stderr).match(/Permission denied/g)).toHaveLength(3);
    expect(fs.existsSync(outside)).toBe(false);
    expect(fs.existsSync(path.join(other, "planted.txt"))).toBe(false);
    expect(fs.existsSync(path.join(t.stateDir, "planted"))).toBe(false);
    expect(fs.existsSync(path.join(t.projectDir, "inside.txt"))).toBe(true);
  });

  // Landlock (ABI <= 7) has no rule for connecting to a path-named Unix socket: what keeps agent commands off the
  // stdio relay's socket is the other uid they run as when the bridge is root (state dir 0700, socket 0600).
  it.skipIf(!asRoot)("cannot connect to the bridge's MCP socket in the state dir", async () => {
    const socket = path.join(t.stateDir, "mcp.sock");
    expect(fs.lstatSync(socket).isSocket()).toBe(true);
    const probe = `require("net").connect(${JSON.stringify(socket)}).on("connect",()=>{console.log("connected");process.exit(0)}).on("error",(e)=>{console.log(e.code);process.exit(3)})`;
    const body = await x(s, `${process.execPath} -e '${probe}'`);
    expect(body.stdout).toBe("EACCES\n");
    expect(body.exitCode).toBe(3);
  });

  it("cannot signal its launcher or the bridge", async () => {
    const body = await x(
      s,
      `kill -9 $PPID; echo ppid=$?; kill -0 ${process.pid}; echo bridge=$?; kill -TERM ${process.pid}; echo term=$?`,
    );
    expect(String(body.stdout)).toBe("ppid=1\nbridge=1\nterm=1\n");
    expect(String(body.stderr)).toMatch(/Operation not permitted/);
    // Still here, and still answering.
    expect((await x(s, "echo alive")).stdout).toBe("alive\n");
  });

  it.skipIf(!asRoot)("runs as the project owner, and the files it makes belong to that owner", async () => {
    const body = await x(s, "id -u; touch owned.txt; mkdir -p made/dir");
    expect(body.stdout).toBe(`${TEST_AGENT_UID}\n`);
    expect(fs.statSync(path.join(t.projectDir, "owned.txt")).uid).toBe(TEST_AGENT_UID);
    expect(fs.statSync(path.join(t.projectDir, "made", "dir")).uid).toBe(TEST_AGENT_UID);
  });

  it("has HOME and TMPDIR in a scratch folder of its own, outside every project", async () => {
    const body = await x(s, 'echo "$HOME"; test "$HOME" = "$TMPDIR" && touch "$TMPDIR/scratch-file" && echo ok');
    const [home, ok] = String(body.stdout).trim().split("\n");
    expect(ok).toBe("ok");
    expect(home!.endsWith(`/${s.projectId}`)).toBe(true);
    expect(home!.startsWith(t.projectDir)).toBe(false);
  });
});

// Issue 31: a worktree session's commands work in its linked worktree. git there reads the main repository's
// metadata (read-only, as designed); nothing else of the main repository, and nothing of another worktree session.
describe.skipIf(!landlock)("terminal isolation in a worktree session (Landlock)", () => {
  let repo: string;
  let s: AgentSession;
  let own: string;
  let sibling: string;
  const worktreeSession = async (projectId: string, name: string) => {
    const created = await t.api<{ id: string; initUrl: string; worktree: { path: string } }>("POST", "/api/sessions", {
      projectId,
      name,
      worktree: {},
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const init = (await (await fetch(created.body.initUrl)).json()) as AgentSession["init"];
    const session = { sessionId: created.body.id, projectId, initUrl: created.body.initUrl, init, r: init.bases.r };
    return { session: { ...session, m: init.bases.m }, path: created.body.worktree.path };
  };
  beforeAll(async () => {
    repo = makeRepository();
    const project = await t.api<{ id: string }>("POST", "/api/projects", {
      name: "wt-isolation",
      root: repo,
      permissions: { write: true, terminal: true },
    });
    const first = await worktreeSession(project.body.id, "iso-one");
    const second = await worktreeSession(project.body.id, "iso-two");
    s = first.session;
    own = first.path;
    sibling = second.path;
  });

  it("runs git status, log and diff on its own branch, reading the main repository's metadata", async () => {
    const body = await x(
      s,
      "echo more >> a.txt; git status --short --branch; git log --oneline | wc -l; git diff --stat",
    );
    expect(body, JSON.stringify(body)).toMatchObject({ ok: true, exitCode: 0 });
    expect(String(body.stdout)).toContain("## urlbridge/iso-one");
    expect(String(body.stdout)).toContain(" M a.txt");
    expect(String(body.stdout)).toContain("1 file changed");
  });

  it.each([
    ["the main working tree's files", () => `cat ${repo}/a.txt`],
    ["another worktree session's files", () => `cat ${sibling}/a.txt`],
  ])("cannot read %s", async (_name, command) => {
    const body = await x(s, command());
    expect(body.exitCode).not.toBe(0);
    expect(String(body.stdout)).toBe("");
    expect(String(body.stderr)).toMatch(/Permission denied/);
  });

  it("cannot move a branch, add objects or plant anything in the main repository's metadata", async () => {
    const refs = git(repo, "for-each-ref");
    const body = await x(
      s,
      [
        `git update-ref refs/heads/main HEAD; echo ref=$?`,
        `echo planted > new.txt; git add new.txt; echo add=$?`,
        `touch ${repo}/.git/hooks/post-checkout; echo hook=$?`,
        `echo x >> ${repo}/.git/config; echo config=$?`,
        `touch ${repo}/planted.txt; echo tree=$?`,
      ].join("; "),
    );
    expect(String(body.stdout)).toMatch(/ref=[1-9]/);
    expect(String(body.stdout)).toMatch(/add=[1-9]/);
    expect(String(body.stdout)).toMatch(/hook=[1-9]/);
    expect(String(body.stdout)).toMatch(/config=[1-9]/);
    expect(String(body.stdout)).toMatch(/tree=[1-9]/);
    expect(git(repo, "for-each-ref")).toBe(refs);
    expect(fs.existsSync(path.join(repo, ".git", "hooks", "post-checkout"))).toBe(false);
    expect(fs.existsSync(path.join(repo, "planted.txt"))).toBe(false);
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(fs.existsSync(path.join(own, "new.txt"))).toBe(true);
  });
});

describe("process lifecycle: nothing a command starts escapes", () => {
  it("ends setsid'd and double-forked daemons at the foreground timeout", async () => {
    const s = await t.session({ terminal: true, root: makeTempDir("lifecycle-timeout") });
    const m = marker();
    const body = await x(s, `${daemons(m)}; sleep 30`, "timeout=1500&");
    expect(body).toMatchObject({ ok: false, errorCode: "command_timed_out" });
    expect(processesWith(m)).toEqual([]);
  });

  it("ends them when the foreground shell exits, and two such holders of stdout do not freeze the gate", async () => {
    const s = await t.session({ terminal: true, root: makeTempDir("lifecycle-gate") });
    const [m1, m2] = [marker(), marker()];
    // Each daemon keeps the command's stdout open (no redirection): before the launcher it held a slot forever.
    const holders = await Promise.all([m1, m2].map((m) => x(s, `setsid -f sleep ${m}; echo held`)));
    for (const body of holders)
      expect(body).toMatchObject({ ok: true, exitCode: 0, stdout: "held\n", leftoversKilled: 1 });
    expect(processesWith(m1)).toEqual([]);
    expect(processesWith(m2)).toEqual([]);
    expect(await waitUntil(() => t.bridge.terminal.gate.snapshot().running === 0)).toBe(true);
    expect((await x(s, "echo next")).stdout).toBe("next\n");
  });

  const scopes: Array<[string, (s: AgentSession) => Promise<unknown>]> = [
    ["the session is deleted", (s) => t.api("DELETE", `/api/sessions/${s.sessionId}`)],
    ["the session is disabled", (s) => t.api("POST", `/api/sessions/${s.sessionId}/disable`)],
    ["the session is rotated", (s) => t.api("POST", `/api/sessions/${s.sessionId}/rotate`)],
    [
      "the project loses its terminal permission",
      (s) => t.api("PATCH", `/api/projects/${s.projectId}`, { permissions: { terminal: false } }),
    ],
    ["the project is deleted", (s) => t.api("DELETE", `/api/projects/${s.projectId}`)],
  ];
  it.each(scopes)("ends a bg=1 launch and its daemons when %s", async (_name, endScope) => {
    const s = await t.session({ terminal: true, root: makeTempDir("lifecycle-scope") });
    const m = marker();
    const launched = await x(s, `${daemons(m)}; sleep ${m}`, "bg=1&");
    expect(launched).toMatchObject({ ok: true, processState: "running" });
    expect(await waitUntil(() => processesWith(m).length >= 3)).toBe(true);
    const answer = (await endScope(s)) as { status: number };
    expect(answer.status).toBeLessThan(300);
    expect(await waitUntil(() => processesWith(m).length === 0, 8000)).toBe(true);
  });

  it.each(scopes)("ends a pty=1 process and its daemons when %s", async (_name, endScope) => {
    const s = await t.session({ terminal: true, root: makeTempDir("lifecycle-pty") });
    const m = marker();
    const started = await x(s, `${daemons(m)}; sleep ${m}`, "pty=1&");
    expect(started).toMatchObject({ ok: true, mode: "pty", processState: "running" });
    expect(await waitUntil(() => processesWith(m).length >= 3)).toBe(true);
    const answer = (await endScope(s)) as { status: number };
    expect(answer.status).toBeLessThan(300);
    expect(await waitUntil(() => processesWith(m).length === 0, 8000)).toBe(true);
  });

  it("lets a project's later commands read its bg=1 log, and no other project's", async () => {
    const s = await t.session({ terminal: true, root: makeTempDir("lifecycle-log") });
    const stranger = await t.session({ terminal: true, root: makeTempDir("lifecycle-log-stranger") });
    const launched = await x(s, "echo log-line-$((6*7)); sleep 30", "bg=1&");
    const logFile = String(launched.logFile);
    expect(await x(s, `cat ${logFile}`)).toMatchObject({ ok: true, exitCode: 0, stdout: "log-line-42\n" });
    const denied = await x(stranger, `cat ${logFile}`);
    expect(denied.exitCode).not.toBe(0);
    expect(String(denied.stdout)).toBe("");
    await settle(String(launched.stop));
  });

  it("stops a bg=1 tree through its stop URL, and only for the session that started it", async () => {
    const s = await t.session({ terminal: true, root: makeTempDir("lifecycle-stop") });
    const intruder = await t.session({ terminal: true, root: makeTempDir("lifecycle-intruder") });
    const m = marker();
    const launched = await x(s, `${daemons(m)}; sleep ${m}`, "bg=1&");
    const pid = launched.pid as number;
    expect(await agentGet<Body>(`${intruder.m}/x?stop=${pid}`)).toMatchObject({
      ok: false,
      errorCode: "process_not_found",
    });
    expect(processesWith(m).length).toBeGreaterThanOrEqual(3);
    expect(await settle(String(launched.stop))).toMatchObject({ ok: true, mode: "stop", pid, stopped: true });
    expect(processesWith(m)).toEqual([]);
  });

  it("ends every tree when the bridge shuts down", async () => {
    const local = await startTestBridge();
    const s = await local.session({ terminal: true });
    const m = marker();
    await x(s, `${daemons(m)}; sleep ${m}`, "bg=1&");
    const running = agentGet<Body>(`${s.m}/x?raw=${encodeUrlText(`${daemons(m)}; sleep ${m}`)}`).catch(() => undefined);
    expect(await waitUntil(() => processesWith(m).length >= 4)).toBe(true);
    await local.close();
    await running;
    expect(processesWith(m)).toEqual([]);
  });
});
