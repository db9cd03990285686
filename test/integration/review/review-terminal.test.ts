// Terminal changes in the change set (issue 30 item 1): a /x command creates, modifies, deletes and renames files
// (a BOM+CRLF text and a binary among them); /c lists each under the command's call, its diffs match the bytes
// before and after, /n of that call restores the tree exactly; a tree past the checkpoint budget gets a notice in
// the answer and in the change set instead of a silent gap.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { applyPatch } from "diff";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, giveToAgent, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { decodeExact, encodeText } from "../../../server/text/index.js";
import { snapshotTree, url } from "../mutation/fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; callId?: string };
type Side = { size: number; fingerprint: string; mode?: number };
type Change = { path: string; change: string; moved?: string; before?: Side; after?: Side };

const BOM_CRLF = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("alpha\r\nbeta\r\ngamma\r\n")]);
const BINARY = Buffer.from([0x00, 0xff, 0x10, 0x00, 0x89, 0x50, 0x4e, 0x47]);
const fingerprintOf = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex").slice(0, 32);

const COMMAND = [
  "printf 'made\\n' > made.txt",
  "printf 'more\\n' >> keep.txt",
  "rm gone.txt",
  "mv old-name.txt new-name.txt",
  "sed -i 's/beta/BETA/' crlf.txt",
  "printf '\\000\\001\\377' >> bin.dat",
  "mkdir -p sub && printf 'deep\\n' > sub/deep.txt",
].join(" && ");

/** The files (not folders: a revert leaves the folders a change created) of a tree, with modes and bytes. */
const filesOf = (root: string) => Object.entries(snapshotTree(root)).filter(([, e]) => e.kind === "file");

describe("terminal changes in the change set", () => {
  let t: TestBridge;
  let s: AgentSession;
  const file = (rel: string) => path.join(t.projectDir, rel);
  const get = (route: string, params: Array<[string, string | number]> = [], raw?: string) =>
    agentGet<Body>(url(s.m!, route, params, raw));
  const before: Record<string, Buffer> = {};
  let original: ReturnType<typeof filesOf>;
  let callId: string;

  beforeAll(async () => {
    t = await startTestBridge();
    fs.writeFileSync(file("crlf.txt"), BOM_CRLF);
    fs.writeFileSync(file("keep.txt"), "one\ntwo\n");
    fs.writeFileSync(file("gone.txt"), "bye\n");
    fs.writeFileSync(file("old-name.txt"), "renamed\n");
    fs.writeFileSync(file("bin.dat"), BINARY);
    fs.writeFileSync(file("untouched.txt"), "same\n");
    for (const name of fs.readdirSync(t.projectDir)) before[name] = fs.readFileSync(file(name));
    giveToAgent(t.projectDir);
    original = filesOf(t.projectDir);
    s = await t.session({ write: true, terminal: true });
  });
  afterAll(async () => t.close());

  it("lists each file a command created, modified, deleted or renamed under the command's call", async () => {
    const ran = await get("x", [], COMMAND);
    expect(ran).toMatchObject({ ok: true, exitCode: 0 });
    expect(ran.checkpointNotice).toBeUndefined();
    callId = ran.callId!;
    const set = await get("c");
    const intents = set.intents as Array<{ callId: string; tool: string; files: Change[] }>;
    expect(intents.map((i) => [i.callId, i.tool])).toEqual([[callId, "terminal"]]);
    const kinds = intents[0]!.files.map((f) => [f.path, f.change, f.moved ?? ""]).sort();
    expect(kinds).toEqual(
      [
        ["/project/bin.dat", "modified", ""],
        ["/project/crlf.txt", "modified", ""],
        ["/project/gone.txt", "deleted", ""],
        ["/project/keep.txt", "modified", ""],
        ["/project/made.txt", "created", ""],
        ["/project/new-name.txt", "moved_to", "/project/old-name.txt"],
        ["/project/old-name.txt", "moved_from", "/project/new-name.txt"],
        ["/project/sub/deep.txt", "created", ""],
      ].sort(),
    );
  });

  it("gives each file's bytes before and after exactly: fingerprints, sizes, and a diff that applies", async () => {
    const set = await get("c", [["intent", callId]]);
    expect(set.ok).toBe(true);
    const files = set.files as Array<Change & { binary?: true }>;
    for (const f of files) {
      const rel = f.path.replace("/project/", "");
      const was = f.change === "moved_to" ? before[f.moved!.replace("/project/", "")] : before[rel];
      if (f.change === "created") expect(f.before).toBeUndefined();
      else expect(f.before).toMatchObject({ size: was!.length, fingerprint: fingerprintOf(was!) });
      if (f.change === "deleted" || f.change === "moved_from") expect(f.after).toBeUndefined();
      else {
        const now = fs.readFileSync(file(rel));
        expect(f.after).toMatchObject({ size: now.length, fingerprint: fingerprintOf(now) });
      }
    }
    expect(files.find((f) => f.path === "/project/bin.dat")?.binary).toBe(true);

    const crlf = await get("c", [
      ["intent", callId],
      ["path", "crlf.txt"],
    ]);
    expect(crlf.diff).toContain("-beta\r\n+BETA\r");
    const text = decodeExact(before["crlf.txt"]!);
    if (!text.ok) throw new Error("fixture does not decode");
    const patched = applyPatch(text.decoded.text, crlf.diff as string);
    expect(patched).not.toBe(false);
    expect(encodeText(patched as string, "utf-8-bom").equals(fs.readFileSync(file("crlf.txt")))).toBe(true);
  });

  it("reverts the command's call back to the exact tree before it", async () => {
    const done = await get("n", [["intent", callId]]);
    expect(done).toMatchObject({ ok: true });
    expect(filesOf(t.projectDir)).toEqual(original);
  });
});

describe("terminal checkpoints past their budget", () => {
  let t: TestBridge;
  let s: AgentSession;

  beforeAll(async () => {
    t = await startTestBridge({ URLBRIDGE_CHECKPOINT_MAX_FILES: "5" });
    for (let i = 0; i < 8; i++) fs.writeFileSync(path.join(t.projectDir, `f${i}.txt`), `${i}\n`);
    s = await t.session({ write: true, terminal: true });
  });
  afterAll(async () => t.close());

  it("says in the answer and in the change set that the command's changes were not recorded", async () => {
    const ran = await agentGet<Body>(url(s.m!, "x", [], "printf 'x\\n' > f0.txt"));
    const notice = "terminal changes not recorded: tree over 5 files (URLBRIDGE_CHECKPOINT_MAX_FILES)";
    expect(ran).toMatchObject({ ok: true, exitCode: 0, checkpointNotice: notice });
    const set = await agentGet<Body>(url(s.m!, "c"));
    expect(set).toMatchObject({
      ok: true,
      intents: [],
      notices: [{ callId: ran.callId, tool: "terminal", notice, changedAt: expect.any(String) }],
    });
  });
});
