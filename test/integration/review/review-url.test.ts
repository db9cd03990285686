// Review and undo over URL GETs (issue 30): a session writes, edits and patches; /c lists every change with the
// call that made it and gives exact diffs (BOM and CRLF files included); /n reverts one call, one file and the
// whole session byte for byte, refuses a file another session changed since, and applies with force=1.
import fs from "node:fs";
import path from "node:path";
import { applyPatch } from "diff";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, giveToAgent, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { decodeExact, encodeText } from "../../../server/text/index.js";
import { url } from "../mutation/fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; callId?: string };

/** Over SEAL_AHEAD_BYTES (store/changes.ts): both sides of its edit are sealed ahead, a slice per turn. */
const LARGE = Array.from({ length: 40_000 }, (_, i) => `row ${i} ${"y".repeat(20)}`).join("\n") + "\n";

const BOM_CRLF = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("alpha\r\nbeta\r\ngamma\r\n")]);

describe("review and undo over URLs", () => {
  let t: TestBridge;
  let s: AgentSession;
  let other: AgentSession;
  const file = (rel: string) => path.join(t.projectDir, rel);
  const get = (route: string, params: Array<[string, string | number]> = [], raw?: string, base = s.m!) =>
    agentGet<Body>(url(base, route, params, raw));

  beforeAll(async () => {
    t = await startTestBridge();
    fs.writeFileSync(file("crlf.txt"), BOM_CRLF);
    fs.writeFileSync(file("keep.txt"), "one\ntwo\n");
    fs.writeFileSync(file("gone.txt"), "bye\n");
    fs.writeFileSync(file("large.txt"), LARGE);
    giveToAgent(t.projectDir);
    s = await t.session({ write: true });
    other = await t.session({ write: true, name: "other" });
  });
  afterAll(async () => t.close());

  const calls: Record<string, string> = {};
  const before: Record<string, Buffer> = {};

  it("lists every change a write, an edit and a patch made, each with the call that made it", async () => {
    for (const f of ["crlf.txt", "keep.txt", "gone.txt"]) before[f] = fs.readFileSync(file(f));
    const w = await get("w", [["path", "new/made.txt"]], "made\n");
    expect(w).toMatchObject({ ok: true });
    calls.write = w.callId!;
    const e = await get("e", [
      ["path", "crlf.txt"],
      ["old", "beta"],
      ["new", "BETA"],
    ]);
    expect(e).toMatchObject({ ok: true });
    calls.edit = e.callId!;
    const a = await get(
      "a",
      [],
      "*** Begin Patch\n*** Add File: added.txt\n+added\n*** Update File: keep.txt\n*** Move to: moved.txt\n@@\n one\n-two\n+TWO\n*** Delete File: gone.txt\n*** End Patch\n",
    );
    expect(a).toMatchObject({ ok: true });
    calls.patch = a.callId!;

    const set = await get("c");
    expect(set.ok).toBe(true);
    const intents = set.intents as Array<{
      callId: string;
      tool: string;
      files: Array<{ path: string; change: string }>;
    }>;
    expect(intents.map((i) => [i.callId, i.tool])).toEqual([
      [calls.write, "write"],
      [calls.edit, "edit"],
      [calls.patch, "apply_patch"],
    ]);
    expect(intents[0]!.files).toEqual([expect.objectContaining({ path: "/project/new/made.txt", change: "created" })]);
    expect(intents[1]!.files).toEqual([expect.objectContaining({ path: "/project/crlf.txt", change: "modified" })]);
    expect(intents[2]!.files.map((f) => [f.path, f.change])).toEqual([
      ["/project/added.txt", "created"],
      ["/project/keep.txt", "moved_from"],
      ["/project/moved.txt", "moved_to"],
      ["/project/gone.txt", "deleted"],
    ]);
    const files = set.files as Array<{ path: string; intents: string[] }>;
    expect(files.find((f) => f.path === "/project/crlf.txt")?.intents).toEqual([calls.edit]);
  });

  it("gives exact diffs: applied to the text before they give the bytes after, BOM and CRLF included", async () => {
    const d = await get("c", [["path", "crlf.txt"]]);
    expect(d).toMatchObject({ ok: true, offset: 0, total: expect.any(Number) });
    expect(d.diff).toContain("-beta\r\n+BETA\r");
    const files = d.files as Array<{ before: { encoding: string; newline: string }; after: { encoding: string } }>;
    expect(files[0]).toMatchObject({
      before: { encoding: "utf-8-bom", newline: "crlf" },
      after: { encoding: "utf-8-bom" },
    });
    const beforeText = decodeExact(before["crlf.txt"]!);
    if (!beforeText.ok) throw new Error("fixture does not decode");
    const afterText = applyPatch(beforeText.decoded.text, d.diff as string);
    expect(afterText).not.toBe(false);
    expect(encodeText(afterText as string, "utf-8-bom").equals(fs.readFileSync(file("crlf.txt")))).toBe(true);

    const move = await get("c", [["intent", calls.patch!]]);
    expect(move.diff).toContain("--- /project/keep.txt\n+++ /project/moved.txt");
    expect(move.diff).toContain("--- /project/gone.txt\n+++ /dev/null\n");
    expect(
      applyPatch(
        "one\ntwo\n",
        (move.diff as string)
          .split("--- /project/keep.txt")[1]!
          .replace(/^/, "--- /project/keep.txt")
          .split("--- /project/gone.txt")[0]!,
      ),
    ).toBe("one\nTWO\n");
  });

  it("pages a long diff with a fingerprint, and refuses a page of a diff that changed", async () => {
    const long = Array.from({ length: 200 }, (_, i) => `line ${i} ${"x".repeat(10)}`).join("\n") + "\n";
    expect(await get("w", [["path", "long.txt"]], long)).toMatchObject({ ok: true });
    const first = await get("c", [
      ["path", "long.txt"],
      ["max", 2048],
    ]);
    expect(first).toMatchObject({ ok: true, offset: 0, next: expect.any(String) });
    let text = first.diff as string;
    let next = first.next as string | undefined;
    while (next) {
      const page = await agentGet<Body>(next);
      expect(page.fingerprint).toBe(first.fingerprint);
      text += page.diff as string;
      next = page.next as string | undefined;
    }
    expect(Buffer.byteLength(text)).toBe(first.total);
    expect(applyPatch("", text)).toBe(long);
    // The file changes again: the next page of the old diff is refused, not mixed.
    await agentGet(url(s.r, "r", [["path", "long.txt"]]));
    expect(
      await get("e", [
        ["path", "long.txt"],
        ["old", "line 0 "],
        ["new", "LINE 0 "],
      ]),
    ).toMatchObject({ ok: true });
    expect(await agentGet<Body>(first.next as string)).toMatchObject({ ok: false, errorCode: "page_changed" });
  });

  it("reverts one call byte for byte, and a replayed revert GET reverts once", async () => {
    const u = url(s.m!, "n", [["intent", calls.edit!]]);
    const done = await agentGet<Body>(u);
    expect(done).toMatchObject({ ok: true, files: [{ path: "/project/crlf.txt", op: "restored" }] });
    expect(fs.readFileSync(file("crlf.txt")).equals(before["crlf.txt"]!)).toBe(true);
    // The agent changes the file again; the same GET replays the recorded answer and writes nothing.
    await agentGet(url(s.r, "r", [["path", "crlf.txt"]]));
    expect(
      await get("e", [
        ["path", "crlf.txt"],
        ["old", "gamma"],
        ["new", "GAMMA"],
      ]),
    ).toMatchObject({ ok: true });
    const changed = fs.readFileSync(file("crlf.txt"));
    expect(await agentGet<Body>(u)).toMatchObject({ ok: true, dedupe: "replayed", callId: done.callId });
    expect(fs.readFileSync(file("crlf.txt")).equals(changed)).toBe(true);
  });

  it("reverts a patch's move, add and delete as one call", async () => {
    const done = await get("n", [["intent", calls.patch!]]);
    expect(done).toMatchObject({ ok: true });
    expect(fs.existsSync(file("added.txt"))).toBe(false);
    expect(fs.existsSync(file("moved.txt"))).toBe(false);
    expect(fs.readFileSync(file("keep.txt")).equals(before["keep.txt"]!)).toBe(true);
    expect(fs.readFileSync(file("gone.txt")).equals(before["gone.txt"]!)).toBe(true);
  });

  it("refuses to revert a file another session changed since, showing the conflict; force=1 applies", async () => {
    await agentGet(url(other.r, "r", [["path", "new/made.txt"]]));
    expect(await get("w", [["path", "new/made.txt"]], "theirs\n", other.m!)).toMatchObject({ ok: true });
    const refused = await get("n", [["path", "new/made.txt"]]);
    expect(refused).toMatchObject({
      ok: false,
      errorCode: "revert_conflict",
      errorDetail: {
        conflicts: [{ path: "/project/new/made.txt", laterChange: { tool: "write", session: "another" } }],
      },
      force: expect.any(String),
    });
    expect(fs.readFileSync(file("new/made.txt"), "utf8")).toBe("theirs\n");
    const forced = await agentGet<Body>(refused.force as string);
    expect(forced).toMatchObject({ ok: true, files: [{ path: "/project/new/made.txt", op: "removed" }] });
    expect(fs.existsSync(file("new/made.txt"))).toBe(false);
  });

  it("reverts the whole session back to before its first change", async () => {
    const done = await get("n", [["all", "1"]]);
    expect(done).toMatchObject({ ok: true });
    for (const f of ["crlf.txt", "keep.txt", "gone.txt"])
      expect(fs.readFileSync(file(f)).equals(before[f]!)).toBe(true);
    for (const f of ["added.txt", "moved.txt", "long.txt"]) expect(fs.existsSync(file(f))).toBe(false);
    // The reverts are changes of their own, listed with the call that made them.
    const set = await get("c");
    const tools = (set.intents as Array<{ tool: string }>).map((i) => i.tool);
    expect(tools.filter((x) => x === "revert").length).toBeGreaterThanOrEqual(3);
  });

  it("answers change_not_found for a call id with no recorded change", async () => {
    expect(await get("n", [["intent", "auto:write:0000000000000000"]])).toMatchObject({
      ok: false,
      errorCode: "change_not_found",
    });
  });

  it("keeps a large edit's contents, sealed ahead of its record, and reverts it byte for byte", async () => {
    expect(Buffer.byteLength(LARGE)).toBeGreaterThan(512 * 1024);
    await agentGet(url(s.r, "r", [["path", "large.txt"]]));
    const e = await get("e", [
      ["path", "large.txt"],
      ["old", "row 39999 "],
      ["new", "ROW 39999 "],
      // The answer itself, not a poll URL, even on a loaded machine.
      ["wait", 20_000],
    ]);
    expect(e).toMatchObject({ ok: true });
    expect(e).not.toHaveProperty("poll");
    expect(fs.readFileSync(file("large.txt"), "utf8")).toBe(LARGE.replace("row 39999 ", "ROW 39999 "));
    const done = await get("n", [
      ["intent", e.callId!],
      ["wait", 20_000],
    ]);
    expect(done).toMatchObject({ ok: true, files: [{ path: "/project/large.txt", op: "restored" }] });
    expect(fs.readFileSync(file("large.txt"), "utf8")).toBe(LARGE);
  });
});
