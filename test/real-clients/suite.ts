// The real-client suite's shared body: a real bridge in this process (its own state dir, operator token file and
// MCP socket, as an operator's), a project holding scenario.ts's files, one session with every permission, and the
// labelled stand-in model on loopback. A client file hands in how to configure and run its client with the exact
// snippet the bridge prints (GET /api/sessions/:id/mcp, what the UI and `urlbridge session create` show); this file
// runs it once through the whole scenario and then checks, one `it` per step, what reached the model, what is on
// disk, and what the activity log says.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBridge, type Bridge } from "../../server/bridge.js";
import { loadConfig } from "../../server/config.js";
import type { SessionMcpView } from "../../server/control/session-mcp.js";
import { giveToAgent, makeTempDir } from "../helpers/bridge.js";
import * as s from "./scenario.js";
import { startStandInModel, type StandInModel } from "./stand-in-model.js";

/** The session's name: its server name in every snippet, so tools reach the model as mcp__rc__read, rc_read, ... */
export const SESSION_NAME = "rc";
/** One client run: ~30 s of shell plus a few seconds per call. */
export const CLIENT_RUN_TIMEOUT_MS = 150_000;
export const PROMPT = "Follow the stand-in's scripted steps using the rc tools.";

export interface ClientContext {
  view: SessionMcpView;
  model: StandInModel;
  /** A scratch HOME for the client (never the checkout, never the test's HOME). */
  home: string;
  /** A folder to run the client in: not the checkout, not the project (snippets must work from any folder). */
  workDir: string;
  /** The environment a client starts from: PATH and locale, no URLBRIDGE_* variable. */
  baseEnv: NodeJS.ProcessEnv;
}

export interface ClientRun {
  code: number | null;
  output: string;
}

/** Where a required binary is: the env var CI sets (.ci/test-clients.sh). */
export function clientBinary(envVar: string): string | undefined {
  return process.env[envVar] || undefined;
}

/** Runs one command to its end (or the timeout), collecting stdout and stderr. */
export function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number; input?: string },
): Promise<ClientRun> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.stdin.end(options.input ?? "");
    const timer = setTimeout(() => {
      output += `\n[suite: killed after ${options.timeoutMs ?? CLIENT_RUN_TIMEOUT_MS} ms]`;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // Gone.
      }
    }, options.timeoutMs ?? CLIENT_RUN_TIMEOUT_MS);
    child.on("close", (code) => {
      clearTimeout(timer);
      // The client's own children (a stdio relay) go with it.
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // Gone.
      }
      resolve({ code, output });
    });
  });
}

/** A snippet as the bridge printed it. */
export function snippetText(view: SessionMcpView, id: string): string {
  const found = view.snippets.find((snippet) => snippet.id === id);
  if (!found) throw new Error(`the bridge printed no "${id}" snippet: ${view.snippets.map((x) => x.id).join(", ")}`);
  return found.text;
}

/** Merges a pasted JSON snippet into a config object, as an operator pastes it into a config file. */
export function mergeJson(base: Record<string, unknown>, pasted: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(pasted)) {
    const prior = out[key];
    out[key] =
      prior &&
      typeof prior === "object" &&
      !Array.isArray(prior) &&
      value &&
      typeof value === "object" &&
      !Array.isArray(value)
        ? mergeJson(prior as Record<string, unknown>, value as Record<string, unknown>)
        : value;
  }
  return out;
}

interface ActivityRow {
  route: string;
  tool: string | null;
  ok: boolean;
  errorCode: string | null;
  params: Record<string, string> | null;
}

/**
 * Declares the scenario's tests for one client and transport. `binaryEnv` names the variable CI sets: under CI the
 * binary must be there (the tests fail); elsewhere, without it, they skip and say why.
 */
export function describeRealClient(
  title: string,
  binaryEnv: string,
  runClient: (context: ClientContext) => Promise<ClientRun>,
): void {
  const bin = clientBinary(binaryEnv);
  const required = process.env.CI === "true";
  if (!bin && !required)
    process.stderr.write(
      `${title}: skipped, ${binaryEnv} is not set (source .ci/test-clients.sh to install the real clients)\n`,
    );
  const suite = bin || required ? describe : describe.skip;

  suite(title, () => {
    let bridge: Bridge;
    let stateDir: string;
    let projectDir: string;
    let operatorToken: string;
    let sessionId: string;
    let model: StandInModel;
    let result: ClientRun;
    let history: Array<s.Exchange & { step: s.Step }> = [];

    const api = async <T>(route: string, init: { method?: string; body?: unknown } = {}): Promise<T> => {
      const res = await fetch(`${bridge.controlUrl}${route}`, {
        method: init.method ?? "GET",
        headers: {
          authorization: `Bearer ${operatorToken}`,
          ...(init.body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${route} answered ${res.status}: ${text}`);
      return JSON.parse(text) as T;
    };
    const disk = (file: string) => fs.readFileSync(path.join(projectDir, file), "utf8");
    const why = () =>
      `client exit ${result.code}\n${result.output.slice(-4000)}\n--- stand-in log\n${model.log().join("\n")}`;
    const seenOf = (step: s.Step) =>
      history
        .filter((h) => h.step === step)
        .map((h) => s.seenText(h.raw))
        .join("\n");

    beforeAll(async () => {
      if (!bin)
        throw new Error(
          `${binaryEnv} is not set, and CI=true requires the real client (.ci/test-clients.sh installs it)`,
        );
      if (!fs.existsSync(bin)) throw new Error(`${binaryEnv}=${bin} does not exist (.ci/test-clients.sh installs it)`);
      // The operator's layout: a state dir holding the token file (no URLBRIDGE_OPERATOR_TOKEN), the MCP socket.
      stateDir = makeTempDir("rc-state");
      projectDir = makeTempDir("rc-project");
      for (const [file, text] of Object.entries(s.projectFiles())) {
        fs.mkdirSync(path.dirname(path.join(projectDir, file)), { recursive: true });
        fs.writeFileSync(path.join(projectDir, file), text);
      }
      giveToAgent(projectDir);
      bridge = await startBridge(
        loadConfig({
          HOME: process.env.HOME,
          URLBRIDGE_STATE_DIR: stateDir,
          URLBRIDGE_CONTROL_PORT: "0",
          URLBRIDGE_DATA_PORT: "0",
          URLBRIDGE_LOG_LEVEL: "silent",
          URLBRIDGE_BROWSE_ROOTS: os.tmpdir(),
          URLBRIDGE_SCRATCH_DIR: makeTempDir("rc-scratch"),
        }),
      );
      operatorToken = fs.readFileSync(path.join(stateDir, "operator-token"), "utf8").trim();
      const project = await api<{ id: string }>("/api/projects", {
        method: "POST",
        body: { name: "rc-project", root: projectDir, permissions: { write: true, terminal: true } },
      });
      const session = await api<{ id: string }>("/api/sessions", {
        method: "POST",
        body: { projectId: project.id, name: SESSION_NAME },
      });
      sessionId = session.id;
      const view = await api<SessionMcpView>(`/api/sessions/${sessionId}/mcp`);
      model = await startStandInModel({ serverName: view.serverName });
      const baseEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, LANG: "C.UTF-8", TMPDIR: os.tmpdir() };
      result = await runClient({ view, model, home: makeTempDir("rc-home"), workDir: makeTempDir("rc-work"), baseEnv });
      history = s.stepsOf(model.history());
      // For a person reading a failure: STANDIN_DUMP=<prefix> keeps what each step handed the model.
      if (process.env.STANDIN_DUMP)
        fs.writeFileSync(
          `${process.env.STANDIN_DUMP}.${title.replace(/\W+/g, "-")}.json`,
          JSON.stringify(history, null, 1),
        );
      if (process.env.STANDIN_DUMP)
        fs.writeFileSync(`${process.env.STANDIN_DUMP}.${title.replace(/\W+/g, "-")}.out`, result.output);
    }, CLIENT_RUN_TIMEOUT_MS + 60_000);

    afterAll(async () => {
      await model?.close();
      await bridge?.close();
    });

    it("ran the whole scripted scenario through the bridge's tools", () => {
      expect(
        history.map((h) => h.step).filter((step, i, all) => all.indexOf(step) === i),
        why(),
      ).toEqual(
        expect.arrayContaining(["read", "edit-drifted", "patch", "shell", "read-partial", "edit-failing", "write"]),
      );
    });

    it("gave the model every line of the 500-line file with its number, across pages, none skipped", () => {
      const seen = new Set<number>();
      for (const h of history.filter((x) => x.step === "read"))
        for (const n of s.numberedBigLines(s.seenText(h.raw))) seen.add(n);
      const missing = Array.from({ length: s.BIG_LINES }, (_, i) => i + 1).filter((n) => !seen.has(n));
      const pages = history.filter((x) => x.step === "read").map((x) => JSON.stringify(x.args));
      expect(
        missing.length === 0
          ? "none"
          : `${missing.length} lines never reached the model, e.g. ${missing.slice(0, 3).join(", ")} ... ${missing.at(-1)}; pages: ${pages.join(" ")}`,
      ).toBe("none");
    });

    it("applied the edit whose oldString has drifted indentation, and showed the model the true diff", () => {
      const seen = seenOf("edit-drifted");
      expect(disk(s.GREET_FILE), seen.slice(0, 2000)).toBe(s.GREET_AFTER);
      expect(seen).toMatch(/^-\s{0,2} {8}return "hello " \+ name$/m);
      expect(seen).toMatch(/^\+\s{0,2} {8}return "hi " \+ name$/m);
    });

    it("applied the patch and said so", () => {
      const seen = seenOf("patch");
      expect(disk(s.NOTES_FILE), seen.slice(0, 2000)).toBe(s.NOTES_AFTER);
      expect(seen).toContain(s.NOTES_FILE);
    });

    it("gave the model the 30 s command's stdout and exit code (directly or through the one follow-up call)", () => {
      const seen = `${seenOf("shell")}\n${seenOf("shell-follow-up")}`;
      const calls = history
        .filter((h) => h.step === "shell" || h.step === "shell-follow-up")
        .map((h) => `${h.tool} ${JSON.stringify(h.args)}`);
      expect(seen, `${calls.join("\n")}\n${seen.slice(0, 3000)}`).toContain(s.SHELL_STDOUT);
      expect(seen, seen.slice(0, 3000)).toMatch(/exit(?:Code|_code| code|ed with)?["'\s:=]*0\b/i);
      expect(history.filter((h) => h.step === "shell-follow-up").length).toBeLessThanOrEqual(1);
    });

    it("refused the write after a failed edit of a file the model saw 3 lines of: stale_read, nothing written", () => {
      expect(seenOf("edit-failing"), why()).not.toBe("");
      const seen = seenOf("write");
      expect(seen, why()).toContain("stale_read");
      expect(disk(s.CONFIG_FILE)).toBe(s.CONFIG_BEFORE);
    });

    it("left files on disk and an activity log that agree with what the model was told", async () => {
      const rows = (
        await api<ActivityRow[]>(`/api/activity?sessionId=${encodeURIComponent(sessionId)}&limit=500`)
      ).filter((r) => r.tool !== null);
      const log = JSON.stringify(rows.map((r) => [r.tool, r.ok, r.errorCode, r.params?.path ?? r.params?.mcp]));
      const of = (tool: string, pathName?: string) =>
        rows.filter((r) => r.tool === tool && (pathName === undefined || r.params?.path === pathName));
      expect(disk(s.BIG_FILE)).toBe(s.projectFiles()[s.BIG_FILE]);
      expect(of("edit", s.GREET_FILE).some((r) => r.ok) || of("write", s.GREET_FILE).some((r) => r.ok), log).toBe(
        disk(s.GREET_FILE) === s.GREET_AFTER,
      );
      expect(
        of("apply_patch").some((r) => r.ok),
        log,
      ).toBe(disk(s.NOTES_FILE) === s.NOTES_AFTER);
      expect(
        of("terminal").some((r) => r.ok),
        log,
      ).toBe(true);
      // The config file is unchanged, and no successful edit or write of it is logged.
      expect(disk(s.CONFIG_FILE)).toBe(s.CONFIG_BEFORE);
      expect(
        [...of("edit", s.CONFIG_FILE), ...of("write", s.CONFIG_FILE)].filter((r) => r.ok),
        log,
      ).toEqual([]);
      expect(
        of("write", s.CONFIG_FILE).map((r) => r.errorCode),
        log,
      ).toContain("stale_read");
    });
  });
}
