// Codex's apply-patch scenario corpus (openai/codex, codex-rs/apply-patch/tests/fixtures/scenarios/), each scenario
// restated in our own words: input tree, patch, and the tree Codex expects. /a must end in that tree, or differ only
// where all-or-nothing or a refusal by design is the better answer; each such difference is listed, with its
// reason, in docs/PROTOCOL.md ("Codex's scenarios").
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentGet,
  giveToAgent,
  makeTempDir,
  startTestBridge,
  type AgentSession,
  type TestBridge,
  writeAsAgent,
  mkdirAsAgent,
} from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

type Tree = Record<string, string>;
type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; repairHint?: string };

interface Scenario {
  name: string;
  input: Tree;
  /** The patch text, line by line, envelope included (its spacing is part of some scenarios). */
  patch: string[];
  /** The tree Codex's corpus expects after the patch. */
  codex: Tree;
  /** Only where we differ by design: our tree, the refusal, and the one-line how its hint must give. */
  ours?: { tree: Tree; errorCode: string; hint: RegExp } | { tree: Tree; ok: true };
}

const SCENARIOS: Scenario[] = [
  {
    name: "001 add a file",
    input: {},
    patch: ["*** Begin Patch", "*** Add File: bar.md", "+This is a new file", "*** End Patch"],
    codex: { "bar.md": "This is a new file\n" },
  },
  {
    name: "002 add, delete and update in one patch",
    input: { "delete.txt": "obsolete\n", "modify.txt": "line1\nline2\n" },
    patch: [
      "*** Begin Patch",
      "*** Add File: nested/new.txt",
      "+created",
      "*** Delete File: delete.txt",
      "*** Update File: modify.txt",
      "@@",
      "-line2",
      "+changed",
      "*** End Patch",
    ],
    codex: { "modify.txt": "line1\nchanged\n", "nested/new.txt": "created\n" },
  },
  {
    name: "003 two chunks in one file",
    input: { "multi.txt": "line1\nline2\nline3\nline4\n" },
    patch: [
      "*** Begin Patch",
      "*** Update File: multi.txt",
      "@@",
      "-line2",
      "+changed2",
      "@@",
      "-line4",
      "+changed4",
      "*** End Patch",
    ],
    codex: { "multi.txt": "line1\nchanged2\nline3\nchanged4\n" },
  },
  {
    name: "004 move into a new folder",
    input: { "old/name.txt": "old content\n", "old/other.txt": "unrelated\n" },
    patch: [
      "*** Begin Patch",
      "*** Update File: old/name.txt",
      "*** Move to: renamed/dir/name.txt",
      "@@",
      "-old content",
      "+new content",
      "*** End Patch",
    ],
    codex: { "old/other.txt": "unrelated\n", "renamed/dir/name.txt": "new content\n" },
  },
  {
    name: "005 an empty patch is refused",
    input: { "foo.txt": "stay\n" },
    patch: ["*** Begin Patch", "*** End Patch"],
    codex: { "foo.txt": "stay\n" },
  },
  {
    name: "006 a chunk whose lines are not in the file is refused",
    input: { "modify.txt": "line1\nline2\n" },
    patch: ["*** Begin Patch", "*** Update File: modify.txt", "@@", "-missing", "+changed", "*** End Patch"],
    codex: { "modify.txt": "line1\nline2\n" },
  },
  {
    name: "007 deleting a missing file is refused",
    input: { "foo.txt": "stay\n" },
    patch: ["*** Begin Patch", "*** Delete File: missing.txt", "*** End Patch"],
    codex: { "foo.txt": "stay\n" },
  },
  {
    name: "008 an Update with no chunk is refused",
    input: { "foo.txt": "stay\n" },
    patch: ["*** Begin Patch", "*** Update File: foo.txt", "*** End Patch"],
    codex: { "foo.txt": "stay\n" },
  },
  {
    name: "009 updating a missing file is refused",
    input: { "foo.txt": "stay\n" },
    patch: ["*** Begin Patch", "*** Update File: missing.txt", "@@", "-old", "+new", "*** End Patch"],
    codex: { "foo.txt": "stay\n" },
  },
  {
    name: "010 a move onto an existing file",
    input: { "old/name.txt": "from\n", "old/other.txt": "unrelated\n", "renamed/dir/name.txt": "existing\n" },
    patch: [
      "*** Begin Patch",
      "*** Update File: old/name.txt",
      "*** Move to: renamed/dir/name.txt",
      "@@",
      "-from",
      "+new",
      "*** End Patch",
    ],
    codex: { "old/other.txt": "unrelated\n", "renamed/dir/name.txt": "new\n" },
    ours: {
      tree: { "old/name.txt": "from\n", "old/other.txt": "unrelated\n", "renamed/dir/name.txt": "existing\n" },
      errorCode: "patch_target_exists",
      hint: /never overwrites: delete it first \("\*\*\* Delete File: \/project\/renamed\/dir\/name\.txt" in its own patch\), then send this patch again\./,
    },
  },
  {
    name: "011 an Add over an existing file",
    input: { "duplicate.txt": "old content\n" },
    patch: ["*** Begin Patch", "*** Add File: duplicate.txt", "+new content", "*** End Patch"],
    codex: { "duplicate.txt": "new content\n" },
    ours: {
      tree: { "duplicate.txt": "old content\n" },
      errorCode: "patch_target_exists",
      hint: /never overwrites: change it with "\*\*\* Update File: \/project\/duplicate\.txt", or replace it whole with \/w after reading it\./,
    },
  },
  {
    name: "012 deleting a folder is refused",
    input: { "dir/foo.txt": "stay\n" },
    patch: ["*** Begin Patch", "*** Delete File: dir", "*** End Patch"],
    codex: { "dir/foo.txt": "stay\n" },
  },
  {
    name: "013 an unknown operation header is refused",
    input: { "foo.txt": "stay\n" },
    patch: ["*** Begin Patch", "*** Frobnicate File: foo", "*** End Patch"],
    codex: { "foo.txt": "stay\n" },
  },
  {
    name: "014 an update of a file without a final newline",
    input: { "no_newline.txt": "no newline at end" },
    patch: [
      "*** Begin Patch",
      "*** Update File: no_newline.txt",
      "@@",
      "-no newline at end",
      "+first line",
      "+second line",
      "*** End Patch",
    ],
    codex: { "no_newline.txt": "first line\nsecond line\n" },
    // By design: a patch changes only the lines it names, so the file keeps having no final newline.
    ours: { tree: { "no_newline.txt": "first line\nsecond line" }, ok: true },
  },
  {
    name: "015 a failure after an operation that would succeed",
    input: {},
    patch: [
      "*** Begin Patch",
      "*** Add File: created.txt",
      "+hello",
      "*** Update File: missing.txt",
      "@@",
      "-old",
      "+new",
      "*** End Patch",
    ],
    codex: { "created.txt": "hello\n" },
    ours: { tree: {}, errorCode: "path_not_found", hint: /missing\.txt/ },
  },
  {
    name: "016 a chunk of added lines only",
    input: { "input.txt": "line1\nline2\n" },
    patch: ["*** Begin Patch", "*** Update File: input.txt", "@@", "+added line 1", "+added line 2", "*** End Patch"],
    codex: { "input.txt": "line1\nline2\nadded line 1\nadded line 2\n" },
  },
  {
    name: "017 an indented Update File header",
    input: { "foo.txt": "old\n" },
    patch: ["*** Begin Patch", "  *** Update File: foo.txt", "@@", "-old", "+new", "*** End Patch"],
    codex: { "foo.txt": "new\n" },
  },
  {
    name: "018 spaces before Begin and after End",
    input: { "file.txt": "one\n" },
    patch: [" *** Begin Patch", "*** Update File: file.txt", "@@", "-one", "+two", "*** End Patch "],
    codex: { "file.txt": "two\n" },
  },
  {
    name: "019 non-ASCII lines",
    input: { "foo.txt": "line1\nnaïve café\nline3\n" },
    patch: [
      "*** Begin Patch",
      "*** Update File: foo.txt",
      "@@",
      " line1",
      "-naïve café",
      "+naïve café ✅",
      "*** End Patch ",
    ],
    codex: { "foo.txt": "line1\nnaïve café ✅\nline3\n" },
  },
  {
    name: "020 delete a file",
    input: { "keep.txt": "keep\n", "obsolete.txt": "gone\n" },
    patch: ["*** Begin Patch", "*** Delete File: obsolete.txt", "*** End Patch"],
    codex: { "keep.txt": "keep\n" },
  },
  {
    name: "020 spaces after Begin and before End",
    input: { "file.txt": "one\n" },
    patch: ["*** Begin Patch ", "*** Update File: file.txt", "@@", "-one", "+two", " *** End Patch"],
    codex: { "file.txt": "two\n" },
  },
  {
    name: "021 a chunk that only removes",
    input: { "lines.txt": "line1\nline2\nline3\n" },
    patch: ["*** Begin Patch", "*** Update File: lines.txt", "@@", " line1", "-line2", " line3", "*** End Patch"],
    codex: { "lines.txt": "line1\nline3\n" },
  },
  {
    name: "022 a chunk marked End of File",
    input: { "tail.txt": "first\nsecond\n" },
    patch: [
      "*** Begin Patch",
      "*** Update File: tail.txt",
      "@@",
      " first",
      "-second",
      "+second updated",
      "*** End of File",
      "*** End Patch",
    ],
    codex: { "tail.txt": "first\nsecond updated\n" },
  },
];

/** Every file under root, relative path -> UTF-8 content (folders left implicit, as the corpus lists files). */
function treeOf(root: string): Tree {
  const out: Tree = {};
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      if (fs.statSync(full).isDirectory()) walk(full);
      else out[path.relative(root, full)] = fs.readFileSync(full, "utf8");
    }
  };
  walk(root);
  return out;
}

describe("Codex's apply-patch scenarios through /a", () => {
  let t: TestBridge;
  let made = 0;
  beforeAll(async () => {
    t = await startTestBridge();
  });
  afterAll(async () => t.close());

  it.each(SCENARIOS.map((s) => [s.name, s] as const))("%s", async (_name, scenario) => {
    // Each scenario in a project of its own, so its tree is exactly what the corpus lists.
    const root = makeTempDir("codex");
    for (const [rel, content] of Object.entries(scenario.input)) {
      mkdirAsAgent(path.dirname(path.join(root, rel)), { recursive: true });
      writeAsAgent(path.join(root, rel), content);
    }
    giveToAgent(root);
    const s: AgentSession = await t.session({ write: true, root, name: `codex-${made++}` });
    const body = await agentGet<Body>(url(s.m!, "a", [], scenario.patch.join("\n")));
    // A bridge enables at most 16 sessions at once; this one is done.
    expect((await t.api("DELETE", `/api/sessions/${s.sessionId}`)).status).toBeLessThan(300);
    const refusedByCodex = JSON.stringify(scenario.codex) === JSON.stringify(scenario.input);
    if (scenario.ours && "ok" in scenario.ours) {
      expect(body, JSON.stringify(body)).toMatchObject({ ok: true });
      expect(treeOf(root)).toEqual(scenario.ours.tree);
      return;
    }
    if (scenario.ours) {
      expect(body, JSON.stringify(body)).toMatchObject({ ok: false, errorCode: scenario.ours.errorCode });
      expect(body.repairHint).toMatch(scenario.ours.hint);
      expect(treeOf(root)).toEqual(scenario.ours.tree);
      return;
    }
    expect(body.ok, JSON.stringify(body)).toBe(!refusedByCodex);
    expect(treeOf(root)).toEqual(scenario.codex);
  });
});
