// Issue 27 item 3: every repair URL works when followed. The codes come from the catalog (server/errors.ts), so a
// new code fails this file until it has a case here or a stated reason why it carries no URL to follow. Each case
// is a realistic mistake sent to a real bridge on port 0; the URL it answers is fetched exactly as returned.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CATALOG, type ErrorCode } from "../../../server/errors.js";
import { MAX_READ_PATHS } from "../../../server/kernel/limits.js";
import { agentGet, startTestBridge, writeAsAgent, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { notesPlugin } from "../../helpers/notes-plugin.js";
import { patchText, url } from "../mutation/fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string };
/** The URL fields a failure offers to follow (statusUrl: a staged blob's chunks); "same": the hint says to fetch the same URL once the cause is fixed. */
type Follow = "repair" | "retry" | "find" | "read" | "statusUrl" | "same";

interface RepairCase {
  /** The mistake, as an agent made it. */
  name: string;
  /** Prepares files, then returns the URL the agent sent. */
  mistake: () => string | Promise<string>;
  follow: Follow;
  /** What the agent does between the refusal and following (fix the cause, stage the missing chunk). */
  between?: (refused: Body) => void | Promise<void>;
  /** The followed URL did what the mistake meant. */
  check?: (followed: Body, refused: Body) => void;
}

let t: TestBridge;
let s: AgentSession;
const file = (rel: string) => path.join(t.projectDir, rel);
/** A fixture the agent owns, as its own work would be (file tools decide as the agent). */
const put = (rel: string, content: string | Buffer) => writeAsAgent(file(rel), content);
const text = (rel: string) => fs.readFileSync(file(rel), "utf8");
const json = (b: Body) => JSON.stringify(b);

/** GETs a URL as given; /z answers plain text, which counts as followed when its status is 200. */
async function follow(target: string): Promise<Body> {
  const res = await fetch(target);
  const body = await res.text();
  if (!(res.headers.get("content-type") ?? "").includes("json")) return { ok: res.status === 200, text: body };
  let parsed = JSON.parse(body) as Body;
  for (
    let i = 0;
    i < 120 && (parsed.state === "pending" || parsed.state === "running") && typeof parsed.poll === "string";
    i++
  )
    parsed = await agentGet<Body>(parsed.poll);
  return parsed;
}

const CASES: Partial<Record<ErrorCode, RepairCase[]>> = {
  misplaced_parameter: [
    {
      name: "wait= written after raw= on /w",
      mistake: () => `${s.m}/w?path=mp-wait.txt&raw=hello&wait=1000`,
      follow: "repair",
      check: () => expect(text("mp-wait.txt")).toBe("hello"),
    },
    {
      name: "content holding &path= (path already given): the & is content",
      mistake: () => `${s.m}/w?path=mp-amp.txt&raw=url=a?x=1&path=b`,
      follow: "repair",
      check: () => expect(text("mp-amp.txt")).toBe("url=a?x=1&path=b"),
    },
    {
      name: "percent-encoded content holding &path=: the & is escaped as %26",
      mistake: () => `${s.m}/w?path=mp-pct.txt&raw=a%20%3D%201&path=b`,
      follow: "repair",
      check: () => expect(text("mp-pct.txt")).toBe("a = 1&path=b"),
    },
  ],
  unknown_parameter: [
    {
      name: "file_path= on /r",
      mistake: () => (put("up/a.txt", "alpha\n"), `${s.r}/r?file_path=up/a.txt`),
      follow: "repair",
      check: (b) => expect(json(b)).toContain("alpha"),
    },
    {
      name: "pattern=*.py on /f",
      mistake: () => (put("up/mod.py", "x = 1\n"), `${s.r}/f?path=up&pattern=*.py`),
      follow: "repair",
      check: (b) => expect(b.results).toEqual([expect.objectContaining({ path: "/project/up/mod.py" })]),
    },
    {
      name: "a misspelt limit= on /g",
      mistake: () => (put("up/b.txt", "beta\n"), `${s.r}/g?path=up&limt=5&raw=beta`),
      follow: "repair",
      check: (b) => expect(b.matchedLines).toBe(1),
    },
  ],
  conflicting_parameters: [
    {
      name: "/w content given both as content= and raw=",
      mistake: () => `${s.m}/w?path=cp.txt&content=old&raw=new`,
      follow: "repair",
      check: () => expect(text("cp.txt")).toBe("new"),
    },
  ],
  invalid_parameter: [
    {
      name: "regex=yes on /g",
      mistake: () => (put("ip/r.py", "def f():\n    return 1\n"), `${s.r}/g?path=ip&regex=yes&raw=ret.rn`),
      follow: "repair",
      check: (b) => expect(b).toMatchObject({ regex: true, matchedLines: 1 }),
    },
    {
      name: "timeout=2 meant as seconds on /x",
      mistake: () => `${s.m}/x?timeout=2&raw=sleep~s0.2~s%26%26~secho~sdone`,
      follow: "repair",
      check: (b) => expect(b.stdout).toBe("done\n"),
    },
    { name: "limit= above the maximum on /f", mistake: () => `${s.r}/f?name=txt&limit=999999`, follow: "repair" },
    {
      name: "col= with two paths on /r",
      mistake: () => (
        put("ip/c1.txt", "one\n"),
        put("ip/c2.txt", "two\n"),
        `${s.r}/r?path=ip/c1.txt&path=ip/c2.txt&col=3`
      ),
      follow: "repair",
      check: (b) => expect(json(b)).toContain("two"),
    },
  ],
  missing_parameter: [
    {
      name: "/z with no parameters",
      mistake: async () => (await agentGet(`${s.r}/r?path=.`), `${s.r}/z`),
      follow: "repair",
    },
    {
      name: "count= on /w without blob=",
      mistake: () => `${s.m}/w?path=mis-count.txt&count=2&raw=direct`,
      follow: "repair",
      check: () => expect(text("mis-count.txt")).toBe("direct"),
    },
  ],
  unexpected_raw: [
    {
      name: "raw= on /r",
      mistake: () => (put("ur.txt", "read me\n"), `${s.r}/r?path=ur.txt&raw=x`),
      follow: "repair",
      check: (b) => expect(json(b)).toContain("read me"),
    },
  ],
  unknown_route: [
    {
      name: "/cat",
      mistake: () => (put("cat.txt", "meow\n"), `${s.r}/cat?path=cat.txt`),
      follow: "repair",
      check: (b) => expect(json(b)).toContain("meow"),
    },
  ],
  wrong_capability_base: [
    {
      name: "/w on the read base",
      mistake: () => `${s.r}/w?path=wcb.txt&raw=written`,
      follow: "repair",
      check: () => expect(text("wcb.txt")).toBe("written"),
    },
  ],
  unknown_plugin: [
    {
      name: "a plugin id from another bridge",
      mistake: () => `${s.r}/k?plugin=nosuch&tool=list`,
      follow: "repair",
      check: (b) => expect(json(b)).toContain("notes"),
    },
  ],
  path_not_found: [
    {
      name: "a Windows-style path",
      mistake: () => (put("src/win.py", "x\n"), `${s.r}/r?path=src%5Cwin.py`),
      follow: "find",
      check: (b) => expect(b.results).toEqual([expect.objectContaining({ path: "/project/src/win.py" })]),
    },
    {
      name: "the right name in the wrong folder",
      mistake: () => (put("deep/er/found.txt", "x\n"), `${s.r}/r?path=deep/found.txt`),
      follow: "find",
      check: (b) => expect(b.results).toEqual([expect.objectContaining({ path: "/project/deep/er/found.txt" })]),
    },
  ],
  too_many_paths: [
    {
      name: `${MAX_READ_PATHS + 2} path= on one /r`,
      mistake: () => {
        const names = Array.from({ length: MAX_READ_PATHS + 2 }, (_, i) => `many/${i}.txt`);
        names.forEach((n) => put(n, `${n}\n`));
        return `${s.r}/r?${names.map((n) => `path=${n}`).join("&")}`;
      },
      follow: "repair",
      check: (b) => expect(json(b)).toContain("many/0.txt"),
    },
  ],
  invalid_regex: [
    {
      name: "an unbalanced ( with regex=1",
      mistake: () => (put("rx.txt", "call foo(1)\n"), `${s.r}/g?path=rx.txt&regex=1&raw=foo(`),
      follow: "repair",
      check: (b) => expect(b.matchedLines).toBe(1),
    },
  ],
  range_out_of_bounds: [
    {
      name: "/z part past the end",
      mistake: async () => (await agentGet(`${s.r}/r?path=.`), `${s.r}/z?last=1&part=99`),
      follow: "repair",
    },
  ],
  unsupported_language: [
    {
      name: "/o on a text file",
      mistake: () => (put("notes.txt", "plain\n"), `${s.r}/o?path=notes.txt`),
      follow: "read",
      check: (b) => expect(json(b)).toContain("plain"),
    },
  ],
  background_start_failed: [
    {
      name: "a server that dies at start-up",
      mistake: () => `${s.m}/x?bg=1&raw=echo~sstarting~s%26%26~sexit~s3`,
      follow: "repair",
      check: (b) => expect(b).toMatchObject({ mode: "foreground", exitCode: 3, stdout: "starting\n" }),
    },
  ],
  staged_blob_incomplete: [
    {
      name: "/w consuming a blob before its last chunk",
      mistake: async () => {
        await agentGet(
          url(
            s.m!,
            "s",
            [
              ["blob", "half"],
              ["i", 0],
              ["count", 2],
            ],
            "first ",
          ),
        );
        return `${s.m}/w?path=staged.txt&blob=half&count=2`;
      },
      between: async () =>
        void (await agentGet(
          url(
            s.m!,
            "s",
            [
              ["blob", "half"],
              ["i", 1],
              ["count", 2],
            ],
            "second",
          ),
        )),
      follow: "same",
      check: () => expect(text("staged.txt")).toBe("first second"),
    },
    {
      name: "/w consuming a blob before its last chunk: its status",
      mistake: async () => {
        await agentGet(
          url(
            s.m!,
            "s",
            [
              ["blob", "part"],
              ["i", 1],
              ["count", 2],
            ],
            "tail",
          ),
        );
        return `${s.m}/w?path=staged2.txt&blob=part&count=2`;
      },
      follow: "statusUrl",
      check: (b) => expect(json(b)).toContain("part"),
    },
  ],
  staged_count_mismatch: [
    {
      name: "/w with count= one more than was staged",
      mistake: async () => {
        await agentGet(
          url(
            s.m!,
            "s",
            [
              ["blob", "two"],
              ["i", 0],
              ["count", 2],
            ],
            "a",
          ),
        );
        await agentGet(
          url(
            s.m!,
            "s",
            [
              ["blob", "two"],
              ["i", 1],
              ["count", 2],
            ],
            "b",
          ),
        );
        return `${s.m}/w?path=cm.txt&blob=two&count=3`;
      },
      follow: "statusUrl",
      check: (b) => expect(json(b)).toContain("two"),
    },
  ],
  stale_read: [
    {
      name: "/w over a file never read",
      mistake: () => (put("sr.txt", "old\n"), url(s.m!, "w", [["path", "sr.txt"]], "new\n")),
      between: async (refused) => void expect(await agentGet<Body>(String(refused.read))).toMatchObject({ ok: true }),
      follow: "retry",
      check: () => expect(text("sr.txt")).toBe("new\n"),
    },
  ],
  // The retry is guarded (atLine, blockHash): it replaces exactly the lines the answer showed.
  edit_no_match: [
    {
      name: "/e with an old= from before the file changed",
      mistake: () => (
        put("enm.py", "def f():\n    total = 1\n    return total\n"),
        url(
          s.m!,
          "e",
          [
            ["path", "enm.py"],
            ["old", "    total = 0\n"],
          ],
          "    total = 2\n",
        )
      ),
      follow: "retry",
      check: () => expect(text("enm.py")).toBe("def f():\n    total = 2\n    return total\n"),
    },
  ],
  edit_target_changed: [
    {
      name: "a guarded retry followed after two lines were inserted above its block",
      mistake: () => (
        put("etc.py", "# one\n# two\ndef f():\n    total = 1\n    return total\n"),
        url(
          s.m!,
          "e",
          [
            ["path", "etc.py"],
            ["old", "    total = 1\n"],
            ["atLine", "2"],
          ],
          "    total = 2\n",
        )
      ),
      follow: "read",
      check: (b, refused) => {
        expect(refused.errorDetail).toMatchObject({ reason: "moved", foundAtLines: [4] });
        expect(json(b)).toContain("total = 1");
        expect(text("etc.py")).toContain("total = 1");
      },
    },
  ],
  edit_ambiguous: [
    {
      name: "/e with an old= found twice",
      mistake: () => (
        put("amb.txt", "x = 1\nx = 1\n"),
        url(
          s.m!,
          "e",
          [
            ["path", "amb.txt"],
            ["old", "x = 1"],
          ],
          "x = 2",
        )
      ),
      follow: "read",
    },
  ],
  patch_hunk_not_found: [
    {
      name: "a patch whose context line is wrong",
      mistake: () => (
        put("phn.py", "def f():\n    return 1\n"),
        url(s.m!, "a", [], patchText("*** Update File: phn.py", "@@", "-    return 2", "+    return 3"))
      ),
      follow: "read",
      check: (b, refused) => {
        // Re-sending the same patch would fail the same way: no retry is offered.
        expect(refused.retry).toBeUndefined();
        expect(json(b)).toContain("return 1");
      },
    },
  ],
  patch_commit_failed: [
    {
      name: "an Add through a path that is a file",
      mistake: () => (
        put("pcf/a.txt", "a\n"),
        put("pcf/blocker", "file\n"),
        url(
          s.m!,
          "a",
          [],
          patchText("*** Update File: pcf/a.txt", "@@", "-a", "+A", "*** Add File: pcf/blocker/child.txt", "+1"),
        )
      ),
      between: () => fs.rmSync(file("pcf/blocker")),
      follow: "retry",
      check: () => expect(text("pcf/blocker/child.txt")).toBe("1\n"),
    },
  ],
  invalid_path: [
    {
      name: "a Windows-style path to create beside an existing folder (bs\\new.txt, bs/ existing)",
      mistake: () => (put("bs/keep.txt", "k\n"), `${s.m}/w?path=bs%5Cnew.txt&raw=new`),
      follow: "repair",
      check: () => expect(text("bs/new.txt")).toBe("new"),
    },
  ],
  permission_denied: [
    {
      name: "/w over a 0444 file the agent owns, retried after chmod u+w",
      mistake: async () => {
        put("pd.txt", "old\n");
        fs.chmodSync(file("pd.txt"), 0o444);
        expect(await agentGet<Body>(url(s.r, "r", [["path", "pd.txt"]]))).toMatchObject({ ok: true });
        return url(s.m!, "w", [["path", "pd.txt"]], "new\n");
      },
      between: () => fs.chmodSync(file("pd.txt"), 0o644),
      follow: "retry",
      check: () => expect(text("pd.txt")).toBe("new\n"),
    },
  ],
};

/**
 * Codes that carry no URL to follow, or whose URL this file cannot provoke from a request, each with why.
 * "covered:" names the suite that follows the URL through the condition it needs.
 */
const NO_CASE: Partial<Record<ErrorCode, string>> = {
  request_target_too_long: "no URL: the request must be staged, which the hint's plan spells out",
  raw_too_long: "no URL: the content must be staged (/s), which the hint's plan spells out",
  tool_not_enabled: "no URL: only the operator can enable the tool",
  not_found: "no URL: the data plane's opaque 404",
  path_outside_root: "no URL: the agent must choose a path inside the project",
  symlink_escape: "no URL: the link leads out of the project",
  not_a_file: "no URL: /t shows what the path is",
  not_a_directory: "no URL: the path is a file",
  project_root_missing: "no URL: only the operator can restore the folder",
  project_root_changed: "no URL: only the operator can restore the folder",
  path_changed:
    "covered: its retry re-sends the request once a swapped folder settles; provoking it needs a race (test/integration/mutation/patch-phases.test.ts)",
  search_busy: "no URL: the same URL later",
  binary_file: "no URL: the file has no text to search or edit",
  invalid_line_range: "no URL: the hint states the file's line count",
  outline_failed:
    "not provokable from a request: the parsers answer any text with error nodes; its read URL is the same as unsupported_language's, followed above",
  unknown_plugin_tool: "no URL: /k?plugin=<id> lists the tools",
  plugin_arguments_invalid: "no URL: the arguments must change",
  plugin_authority_exceeded: "no URL: only the operator can widen a plugin's authority",
  file_too_large: "no URL: /g finds the lines",
  grep_engine_unavailable: "no URL: operator",
  snapshot_not_found: "no URL: the original read must run again",
  command_refused: "no URL: the command must change",
  command_timed_out: "no URL: a longer timeout= or bg=1 is the agent's choice",
  terminal_busy:
    "covered: its retry runs the command once a slot frees (test/integration/mutation/terminal-gate.test.ts)",
  background_limit_reached:
    "covered: its retry starts the process once one is stopped (test/integration/mutation/terminal-background.test.ts)",
  process_not_found: "no URL: the process is gone",
  not_a_worktree_session: "no URL: only the operator can give a session a worktree of its own",
  not_on_session_branch: "no URL: the worktree must be switched back to the session's branch first, as the hint says",
  nothing_to_commit: "no URL: there is nothing to commit until a file changes",
  nested_repository: "no URL: the nested repository must be removed from the worktree (or left out with path=) first",
  pty_limit_reached:
    "no URL: one of the session's PTYs must be stopped first (test/integration/terminal-pty/pty-url.test.ts)",
  process_ended: "no URL: the PTY process has ended; a new one starts with /x?pty=1",
  change_not_found: "no URL: /c lists the session's changes and their call ids",
  revert_conflict: "covered: its force URL reverts over the later change (test/integration/review/review-url.test.ts)",
  review_detail_dropped: "no URL: the contents were dropped past the review budget; the file is changed by hand",
  memory_budget_exceeded:
    "no URL: the command must use less memory, or the operator raises the budget (test/integration/mutation/agent-limits.test.ts)",
  growth_budget_exceeded:
    "no URL: files must be deleted, or the operator raises the budget (test/integration/mutation/agent-limits.test.ts)",
  sandbox_unavailable: "no URL: operator",
  intent_not_found: "no URL: no such call",
  call_id_conflict: "no URL: call= must change",
  interrupted:
    "covered: its retry runs the call again after a shutdown (test/integration/mutation/terminal-shutdown.test.ts)",
  interrupted_rolled_back:
    "covered: its retry applies the patch after a crash mid-commit (test/integration/mutation/crash-recovery.test.ts)",
  intent_result_expired:
    "covered: its retry after the result was pruned (test/integration/mutation/journal-retention.test.ts)",
  staged_chunk_conflict: "no URL: the chunk must change",
  staged_index_out_of_range: "no URL: i= must change",
  staged_chunk_too_large: "no URL: the chunk must be split",
  staged_blob_too_large: "no URL: the content must shrink",
  staged_blob_not_found:
    "no URL: the blob must be staged again (a status URL for a blob that does not exist would answer the same refusal, so none is offered)",
  unsupported_encoding: "no URL: /w replaces the file whole",
  write_failed: "covered: its retry once the file system accepts the write (test/integration/mutation/write.test.ts)",
  edit_no_change: "no URL: the edit is already in place",
  patch_parse_error: "no URL: the patch text must change",
  patch_target_exists: "no URL: the hint says in one line how to replace or move onto an existing file",
  patch_path_conflict: "no URL: the patch must touch each path once",
  patch_too_large: "no URL: the patch must be split",
  malformed_request_target: "no URL: the request line could not be read, so no URL can be rebuilt from it",
  state_store_unavailable: "no URL: the same URL later",
  web_url_invalid: "no URL: the address must change",
  web_address_refused: "no URL: the address is private",
  web_dns_failed: "no URL: the name must change or the resolver recover",
  web_fetch_failed: "no URL: the same URL later",
  web_timeout: "no URL: the same URL later",
  web_too_many_redirects: "no URL: the address must change",
  web_http_status: "no URL: the site's answer",
  web_binary_content: "no URL: not text",
  web_search_not_configured: "no URL: operator",
  web_search_failed: "no URL: the provider's answer",
  opencode_unavailable: "no URL: the plugin's worker",
  opencode_needs_auth: "no URL: operator",
  opencode_instance_changed: "no URL: the plugin's worker",
  opencode_not_found: "no URL: the plugin's worker",
  opencode_busy: "no URL: the same call later",
  opencode_worker_limit: "no URL: the same call later",
  opencode_refused: "no URL: the plugin's worker",
  opencode_failed: "no URL: the plugin's worker",
  page_changed: "no URL: the plugin's page, or /v's: read it again from offset 0",
  not_a_repository: "no URL: the project folder is not a repository (test/integration/kernel/git.test.ts)",
  unknown_revision: "no URL: /v?op=refs lists the revisions there are (test/integration/kernel/git.test.ts)",
  git_output_too_large: "no URL: narrow path= or the revisions",
  git_failed: "no URL: git's own message",
  internal_error: "no URL: the same URL is safe to retry, as the hint says",
};

beforeAll(async () => {
  t = await startTestBridge({}, { plugins: [notesPlugin()] });
  s = await t.session({ write: true, terminal: true });
});
afterAll(async () => t.close());

describe("repair URLs, from the error catalog", () => {
  it("every catalogued code has a case here or a stated reason it has none, and no code both", () => {
    const codes = Object.keys(ERROR_CATALOG) as ErrorCode[];
    const missing = codes.filter((code) => !CASES[code]?.length && !NO_CASE[code]);
    const both = codes.filter((code) => CASES[code]?.length && NO_CASE[code]);
    const unknown = [...Object.keys(CASES), ...Object.keys(NO_CASE)].filter((code) => !(code in ERROR_CATALOG));
    expect({ missing, both, unknown }).toEqual({ missing: [], both: [], unknown: [] });
  });

  const rows = Object.entries(CASES).flatMap(([code, cases]) =>
    cases!.map((c): [string, string, RepairCase] => [code, c.name, c]),
  );
  it.each(rows)("%s (%s): the URL it offers, fetched as returned, succeeds", async (code, _name, c) => {
    const sent = await c.mistake();
    const refused = await follow(sent);
    expect(refused, json(refused)).toMatchObject({ ok: false, errorCode: code });
    const target = c.follow === "same" ? sent : refused[c.follow];
    expect(typeof target, `${c.follow} in ${json(refused)}`).toBe("string");
    // A URL that re-sends the same request cannot work unless the agent fixed the cause in between.
    if (!c.between) expect(target).not.toBe(sent);
    await c.between?.(refused);
    const followed = await follow(String(target));
    expect(followed, json(followed)).toMatchObject({ ok: true });
    c.check?.(followed, refused);
  });

  it("/g?pattern=*.py (a file glob searched as line text) answers a findUrl that lists the files", async () => {
    put("gl/one.py", "a\n");
    put("gl/two.txt", "b\n");
    const empty = await agentGet<Body>(`${s.r}/g?path=gl&pattern=*.py`);
    expect(empty).toMatchObject({ ok: true, matchedLines: 0 });
    const listed = await agentGet<Body>(String(empty.findUrl));
    expect(listed).toMatchObject({ ok: true, results: [expect.objectContaining({ path: "/project/gl/one.py" })] });
  });
});
