// Issue 10's racing test: a flipper process swaps a project folder with a symlink to an outside folder, and
// package.json with a symlink to an outside one (renameat2 RENAME_EXCHANGE, as fast as it can), while every
// file tool runs in a loop through the real data plane. Across >= 10,000 attempts nothing outside may be read,
// created, changed or deleted, and every answer must be correct or a structured error with a clear code.
// Run twice: on a plain project folder, and on a worktree session (issue 31) whose root is a linked worktree,
// where the main repository (its working tree and the metadata the worktree's `.git` file names) is outside too
// and the `.git` file itself is refused every time it is asked for.
import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateExecutable } from "../../../server/kernel/read/executables.js";
import { probeRipgrepConfinement } from "../../../server/kernel/search/ripgrep-confine.js";
import {
  giveToAgent,
  makeTempDir,
  startTestBridge,
  type AgentSession,
  type TestBridge,
  writeAsAgent,
  mkdirAsAgent,
} from "../../helpers/bridge.js";
import { patchText, url } from "../mutation/fixtures.js";
import { git } from "../../helpers/git-repo.js";

const MARKER = `OUTSIDE-${crypto.randomBytes(8).toString("hex")}`;
const ATTEMPT_FLOOR = 10_000;
/** Every tool is tried at least this often, however fast the others are. */
const MIN_PER_TOOL = 60;
/**
 * The loops stop by counts alone (the floor, and every tool's minimum), never by time, so a loaded machine runs
 * the same race, only slower. Past this many attempts they stop anyway and the assertions say which tool lagged.
 */
const ATTEMPT_CEILING = 5 * ATTEMPT_FLOOR;
/** Only guards against a hang; the attempts above bound the work. */
const TEST_TIMEOUT_MS = 900_000;
/** The flipper stops itself after this, should the test die without stopping it. */
const FLIPPER_DEADLINE_S = 1_200;
/** The codes a call may answer while its path is being swapped under it. */
const RACE_CODES = new Set(["symlink_escape", "path_changed"]);
/** A worktree's `.git` link file: refused on every attempt, never read (fd-walk.ts gitLinkRefused). */
const GIT_LINK_CODES = new Set(["path_outside_root"]);
/**
 * A tool's own time bound answering on a loaded machine: /o stops a parse after 10 s. The file was reached inside
 * the project (the parse runs on bytes already read), so containment held; the answer is clear, not wrong.
 */
const outOfTime = (body: Body): boolean =>
  body.errorCode === "outline_failed" && (body.errorDetail as { reason?: string } | undefined)?.reason === "timeout";

const INSIDE_TEXT = "INSIDE CONTENT\n";
const INSIDE_APP = "export function insideFn(): number {\n  return 1;\n}\n";

type Body = Record<string, unknown> & { ok?: boolean; errorCode?: string };

interface Tally {
  attempts: number;
  ok: number;
  codes: Record<string, number>;
  leaks: number;
  /** Answers of a tool's own time bound (outOfTime): containment held, the work did not finish. */
  outOfTime: number;
  wrong: string[];
}

function sha256(bytes: Buffer | string): string {
  return crypto.createHash("sha256").update(bytes).digest("hex");
}

/** Every entry under dir by kind, mode, owner and content hash (symlinks by target), keyed by relative path. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (current: string) => {
    for (const name of fs.readdirSync(current).sort()) {
      const full = path.join(current, name);
      const rel = path.relative(dir, full);
      const info = fs.lstatSync(full);
      const meta = `${info.mode.toString(8)}:${info.uid}:${info.gid}`;
      if (info.isSymbolicLink()) out[rel] = `link:${fs.readlinkSync(full)}`;
      else if (info.isDirectory()) {
        out[rel] = `dir:${meta}`;
        walk(full);
      } else out[rel] = `file:${meta}:${sha256(fs.readFileSync(full))}`;
    }
  };
  walk(dir);
  return out;
}

/** A write+terminal worktree session on the repository at `repo`, named race, as the agent reaches it. */
async function worktreeSession(t: TestBridge, repo: string): Promise<AgentSession> {
  const project = await t.api<{ id: string }>("POST", "/api/projects", {
    name: "race",
    root: repo,
    permissions: { write: true, terminal: true },
  });
  const created = await t.api<{ id: string; initUrl: string }>("POST", "/api/sessions", {
    projectId: project.body.id,
    name: "race",
    worktree: {},
  });
  if (created.status !== 201) throw new Error(`worktree session: ${JSON.stringify(created.body)}`);
  const init = (await (await fetch(created.body.initUrl)).json()) as AgentSession["init"];
  return {
    sessionId: created.body.id,
    projectId: project.body.id,
    initUrl: created.body.initUrl,
    init,
    r: init.bases.r,
    m: init.bases.m,
  };
}

function startFlipper(pairs: Array<[string, string]>): Promise<ChildProcess> {
  const script = path.join(import.meta.dirname, "flipper.py");
  const child = spawn("python3", [script, String(FLIPPER_DEADLINE_S), ...pairs.flat()], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.stdout!.once("data", (chunk: Buffer) =>
      chunk.toString().startsWith("ready") ? resolve(child) : reject(new Error(`flipper: ${chunk}`)),
    );
    child.once("exit", (code) => reject(new Error(`flipper exited early with ${code}`)));
  });
}

function stopFlipper(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.removeAllListeners("exit");
    child.once("exit", () => resolve(Number.parseInt(out.trim(), 10)));
    child.kill("SIGTERM");
  });
}

describe.each(["project folder", "worktree session"] as const)("containment under a racing flipper (%s)", (variant) => {
  let t: TestBridge;
  let s: AgentSession;
  /** A second bridge on the same project whose /g runs ripgrep under Landlock, when this host can confine it. */
  let rgBridge: { t: TestBridge; s: AgentSession } | undefined;
  let rgSkipped: string | undefined;
  let root: string;
  let outside: string;
  /** The worktree variant's main repository: as outside as `outside` is (its working tree and its .git). */
  let main: string | undefined;
  let flipper: ChildProcess | undefined;

  beforeAll(async () => {
    t = await startTestBridge({ URLBRIDGE_GREP_ENGINE: "fallback" });
    root = t.projectDir;
    if (variant === "worktree session") {
      main = path.join(makeTempDir("race-main"), "repo");
      mkdirAsAgent(main);
      root = main;
    }
    outside = makeTempDir("race-outside");
    // The outside twin holds the same names with different content, plus names and text only it has.
    const twin = (dir: string, inside: boolean) => {
      mkdirAsAgent(dir, { recursive: true });
      writeAsAgent(path.join(dir, "inside.txt"), inside ? INSIDE_TEXT : `${MARKER}\n\nOUTSIDE ${MARKER} CONTENT\n`);
      writeAsAgent(
        path.join(dir, "app.ts"),
        inside ? INSIDE_APP : `export function ${MARKER.replace(/-/g, "_")}() {}\n`,
      );
      writeAsAgent(path.join(dir, "edit.txt"), inside ? "state=A\n" : `state=A\n${MARKER}\n`);
      writeAsAgent(path.join(dir, "u.txt"), inside ? "line=A\n" : `line=A\n${MARKER}\n`);
      writeAsAgent(path.join(dir, "mv-A.txt"), inside ? "moving\n" : `${MARKER}\n`);
      if (!inside) {
        writeAsAgent(path.join(dir, "mv-B.txt"), `${MARKER}\n`);
        writeAsAgent(path.join(dir, "cyc.txt"), `${MARKER}\n`);
        writeAsAgent(path.join(dir, `only-${MARKER}.txt`), `${MARKER} CONTENT\n`);
      }
    };
    twin(path.join(root, "flip"), true);
    twin(path.join(outside, "dir"), false);
    writeAsAgent(path.join(root, "package.json"), JSON.stringify({ name: "inside-pkg", scripts: { test: "vitest" } }));
    writeAsAgent(path.join(outside, "package.json"), JSON.stringify({ name: MARKER, scripts: { leak: MARKER } }));
    if (main) {
      // The inside files are the main repository's commit; the session's worktree checks them out.
      git(main, "init", "-q", "-b", "main");
      git(main, "add", ".");
      git(main, "commit", "-q", "-m", "inside");
      giveToAgent(path.dirname(main));
      s = await worktreeSession(t, main);
      root = fs.realpathSync(path.join(path.dirname(main), "repo.worktrees", "race"));
    }
    fs.symlinkSync(path.join(outside, "dir"), path.join(root, "flip-link"));
    fs.symlinkSync(path.join(outside, "package.json"), path.join(root, "pkg-link"));
    if (!main) s = await t.session({ write: true, terminal: true });
    const rg = await locateExecutable("rg");
    if (!rg) rgSkipped = "rg is not on PATH";
    else if (!(await probeRipgrepConfinement(rg)))
      rgSkipped =
        "the sandbox launcher or Landlock is unavailable, so rg cannot be confined here and auto uses the portable engine";
    else {
      const second = await startTestBridge({ URLBRIDGE_GREP_ENGINE: "rg" });
      rgBridge = { t: second, s: await second.session({ root }) };
    }
  });

  afterAll(async () => {
    if (flipper && flipper.exitCode === null) await stopFlipper(flipper);
    await rgBridge?.t.close();
    await t.close();
  });

  it(
    "reads, creates, changes and deletes nothing outside across >= 10,000 tool calls, answering each correctly or with a clear code",
    async () => {
      const before = snapshot(outside);
      const mainBefore = main ? snapshot(main) : undefined;
      // The host path of the main repository's metadata, which the worktree's .git file names.
      const mainGitDir = main ? path.join(main, ".git") : undefined;
      const tallies = new Map<string, Tally>();
      const tally = (tool: string): Tally => {
        let found = tallies.get(tool);
        if (!found) tallies.set(tool, (found = { attempts: 0, ok: 0, codes: {}, leaks: 0, outOfTime: 0, wrong: [] }));
        return found;
      };
      const total = () => [...tallies.values()].reduce((n, x) => n + x.attempts, 0);
      // The mutation tools are counted from the start: patch-delete, say, is first tried only once a racing
      // patch-add has won, and the loops must not stop before it had its share.
      for (const tool of ["write", "edit", "patch-add", "patch-update", "patch-move", "patch-delete", "terminal-cwd"])
        tally(tool);
      const started = Date.now();
      const done = () =>
        total() >= ATTEMPT_CEILING ||
        (total() >= ATTEMPT_FLOOR && [...tallies.values()].every((x) => x.attempts >= MIN_PER_TOOL));

      /** GETs one URL (following a mutation's poll until it settles) and files the answer under `tool`. */
      async function attempt(
        tool: string,
        target: string,
        correct: (body: Body) => boolean,
        codes: Set<string> = RACE_CODES,
      ): Promise<Body | undefined> {
        const entry = tally(tool);
        entry.attempts++;
        let text = await (await fetch(target)).text();
        let body = JSON.parse(text) as Body;
        for (
          let polls = 0;
          (body.state === "pending" || body.state === "running") && typeof body.poll === "string" && polls < 50;
          polls++
        ) {
          text = await (await fetch(body.poll)).text();
          body = JSON.parse(text) as Body;
        }
        if (text.includes(MARKER) || (mainGitDir !== undefined && text.includes(mainGitDir))) {
          entry.leaks++;
          return undefined;
        }
        if (body.ok === true) {
          entry.ok++;
          if (!correct(body)) entry.wrong.push(text.slice(0, 300));
          return body;
        }
        const code = String(body.errorCode);
        entry.codes[code] = (entry.codes[code] ?? 0) + 1;
        if (outOfTime(body)) entry.outOfTime++;
        else if (!codes.has(code) || body.retryable === undefined || typeof body.repairHint !== "string")
          entry.wrong.push(text.slice(0, 300));
        return undefined;
      }

      const loop = async (step: (i: number) => Promise<unknown>) => {
        for (let i = 0; !done(); i++) await step(i);
      };
      const files = (b: Body) => b.files as Array<Record<string, unknown>>;

      const r = s.r;
      const m = s.m!;
      const created: string[] = [];
      let editState = "A";
      let updateState = "A";
      let moveAt = "A";
      let cycPresent = false;

      flipper = await startFlipper([
        [path.join(root, "flip"), path.join(root, "flip-link")],
        [path.join(root, "package.json"), path.join(root, "pkg-link")],
      ]);

      const readers = [
        () => attempt("read", url(r, "r", [["path", "flip/inside.txt"]]), (b) => files(b)[0]?.content === INSIDE_TEXT),
        () =>
          attempt("read", url(r, "r", [["path", "flip"]]), (b) =>
            (files(b)[0]?.entries as Array<{ name: string }>).some((e) => e.name === "inside.txt"),
          ),
        () =>
          attempt(
            "find",
            url(r, "f", [
              ["path", "flip"],
              ["name", "txt"],
            ]),
            (b) => Array.isArray(b.results),
          ),
        () =>
          attempt(
            "find",
            url(r, "f", [
              ["path", "flip"],
              ["query", "CONTENT"],
            ]),
            (b) =>
              (b.results as Array<{ path: string; line?: number }>).every(
                (x) => !x.path.endsWith("/inside.txt") || x.line === 1,
              ),
          ),
        () =>
          attempt("grep", url(r, "g", [["path", "flip"]], "CONTENT"), (b) =>
            (b.files as Array<{ path: string; lines: Array<{ line: number }> }>).every(
              (f) => f.path.endsWith("/inside.txt") && f.lines.every((l) => l.line === 1),
            ),
          ),
        ...(rgBridge
          ? [
              () =>
                // rg, or the descriptor-walking engine when rg searched nothing because the folder was a symlink
                // as it started (RipgrepSearchedNothing): either way the one inside match, never outside content.
                attempt(
                  "grep-rg",
                  url(rgBridge!.s.r, "g", [["path", "flip"]], "CONTENT"),
                  (b) =>
                    (b.engine === "rg" || b.engine === "fallback") &&
                    (b.files as Array<{ path: string; lines: Array<{ line: number }> }>).length === 1 &&
                    (b.files as Array<{ path: string; lines: Array<{ line: number }> }>).every(
                      (f) => f.path === "/project/flip/inside.txt" && f.lines.every((l) => l.line === 1),
                    ),
                ),
            ]
          : []),
        () =>
          attempt("outline", url(r, "o", [["path", "flip/app.ts"]]), (b) =>
            JSON.stringify(b.declarations).includes("insideFn"),
          ),
        () =>
          attempt(
            "stat",
            url(r, "t", [["path", "flip/inside.txt"]]),
            (b) => b.exists === true && b.size === Buffer.byteLength(INSIDE_TEXT),
          ),
        () =>
          attempt(
            "project",
            url(r, "p"),
            (b) => (b.packageJson as { name?: string } | undefined)?.name === "inside-pkg",
          ),
        ...(main
          ? [
              () => attempt("git-link", url(r, "r", [["path", ".git"]]), () => false, GIT_LINK_CODES),
              () => attempt("git-link", url(r, "t", [["path", "flip/../.git"]]), () => false, GIT_LINK_CODES),
              () =>
                attempt(
                  "git-link",
                  url(m, "w", [["path", ".git"]], "gitdir: /elsewhere\n"),
                  () => false,
                  GIT_LINK_CODES,
                ),
            ]
          : []),
      ];

      const writes = async (i: number) => {
        const name = `flip/w-${i}.txt`;
        if (await attempt("write", url(m, "w", [["path", name]], `w ${i}\n`), (b) => b.created === true))
          created.push(name);
      };
      const edits = async (i: number) => {
        const next = editState === "A" ? "B" : "A";
        const body = await attempt(
          "edit",
          url(
            m,
            "e",
            [
              ["path", "flip/edit.txt"],
              ["old", `state=${editState}`],
              ["run", `e${i}`],
            ],
            `state=${next}`,
          ),
          (b) => b.line === 1,
        );
        if (body) editState = next;
      };
      const adds = async (i: number) => {
        const name = `flip/a-${i}.txt`;
        if (
          await attempt("patch-add", url(m, "a", [], patchText(`*** Add File: ${name}`, `+a ${i}`)), (b) =>
            JSON.stringify(b.files).includes("added"),
          )
        )
          created.push(name);
      };
      const updates = async (i: number) => {
        const next = updateState === "A" ? "B" : "A";
        const patch = patchText("*** Update File: flip/u.txt", "@@", `-line=${updateState}`, `+line=${next}`);
        if (
          await attempt("patch-update", url(m, "a", [["run", `u${i}`]], patch), (b) =>
            JSON.stringify(b.files).includes("updated"),
          )
        )
          updateState = next;
      };
      const moves = async (i: number) => {
        const next = moveAt === "A" ? "B" : "A";
        const patch = patchText(`*** Update File: flip/mv-${moveAt}.txt`, `*** Move to: flip/mv-${next}.txt`);
        if (
          await attempt("patch-move", url(m, "a", [["run", `m${i}`]], patch), (b) =>
            JSON.stringify(b.files).includes("moved"),
          )
        )
          moveAt = next;
      };
      const terminals = async (i: number) => {
        const body = await attempt(
          "terminal-cwd",
          url(
            m,
            "x",
            [
              ["cwd", "flip"],
              ["run", `x${i}`],
            ],
            "cat inside.txt",
          ),
          (b) => b.exitCode === 0 && b.stdout === INSIDE_TEXT,
        );
        return body;
      };
      const cycles = async (i: number) => {
        if (!cycPresent) {
          const added = await attempt(
            "patch-add",
            url(m, "a", [["run", `c${i}`]], patchText("*** Add File: flip/cyc.txt", "+cycle")),
            (b) => JSON.stringify(b.files).includes("added"),
          );
          if (added) cycPresent = true;
          return;
        }
        const deleted = await attempt(
          "patch-delete",
          url(m, "a", [["run", `d${i}`]], patchText("*** Delete File: flip/cyc.txt")),
          (b) => JSON.stringify(b.files).includes("deleted"),
        );
        if (deleted) cycPresent = false;
      };

      let swaps: number;
      try {
        await Promise.all([
          ...readers.map((read) => loop(read)),
          loop(() => readers[0]!()),
          loop(writes),
          loop(edits),
          loop(adds),
          loop(updates),
          loop(moves),
          loop(cycles),
          loop(terminals),
        ]);
      } finally {
        swaps = await stopFlipper(flipper);
      }

      const summary = Object.fromEntries(
        [...tallies].map(([tool, x]) => [tool, { attempts: x.attempts, ok: x.ok, leaks: x.leaks, codes: x.codes }]),
      );
      for (const [tool, x] of tallies)
        if (x.wrong.length > 0)
          console.log(`containment race: ${tool} answered wrongly ${x.wrong.length} times, first: ${x.wrong[0]}`);
      if (rgSkipped) console.log(`containment race: /g with ripgrep not raced: ${rgSkipped}`);
      console.log(
        `containment race: ${total()} attempts in ${Date.now() - started} ms, ${swaps} swaps`,
        JSON.stringify(summary),
      );

      expect(swaps).toBeGreaterThan(0);
      expect(total()).toBeGreaterThanOrEqual(ATTEMPT_FLOOR);
      for (const [tool, x] of tallies) {
        expect({ tool, leaks: x.leaks }).toEqual({ tool, leaks: 0 });
        expect({ tool, wrong: x.wrong.slice(0, 3) }).toEqual({ tool, wrong: [] });
        expect(x.attempts, tool).toBeGreaterThanOrEqual(MIN_PER_TOOL);
        // The race must have been lost sometimes and won sometimes, or the test proves nothing.
        if (tool !== "git-link") expect(x.ok + x.outOfTime, tool).toBeGreaterThan(0);
      }
      if (main) {
        // Nothing in the main repository changed: not its working tree, not its metadata.
        expect(snapshot(main)).toEqual(mainBefore);
        expect(tallies.get("git-link")!.ok).toBe(0);
      }
      expect(Object.values(summary).some((x) => Object.keys(x.codes).length > 0)).toBe(true);

      // Nothing outside changed, and everything the tools said they did happened inside.
      expect(snapshot(outside)).toEqual(before);
      expect(fs.lstatSync(path.join(root, "flip")).isDirectory()).toBe(true);
      for (const name of created) expect(fs.existsSync(path.join(root, name)), name).toBe(true);
      expect(fs.readFileSync(path.join(root, "flip/edit.txt"), "utf8")).toBe(`state=${editState}\n`);
      expect(fs.readFileSync(path.join(root, "flip/u.txt"), "utf8")).toBe(`line=${updateState}\n`);
      expect(fs.existsSync(path.join(root, `flip/mv-${moveAt}.txt`))).toBe(true);
      expect(fs.existsSync(path.join(root, `flip/mv-${moveAt === "A" ? "B" : "A"}.txt`))).toBe(false);
      expect(fs.existsSync(path.join(root, "flip/cyc.txt"))).toBe(cycPresent);
    },
    TEST_TIMEOUT_MS,
  );
});
