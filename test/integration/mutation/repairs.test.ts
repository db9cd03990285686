// Issue 14 "repairs that repair": each mutation repair URL, fetched exactly as returned, succeeds or makes
// measurable progress (real gateway, real files).
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeText, type TextEncoding } from "../../../server/text/index.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { patchText, snapshotTree, url, writeFiles } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; errorDetail?: Record<string, unknown> };

describe("mutation repairs", () => {
  let t: TestBridge;
  let s: AgentSession;
  const file = (rel: string) => path.join(t.projectDir, rel);
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true });
  });
  afterAll(async () => t.close());

  describe("stale /e: nearest current lines and a retry built from them", () => {
    it.each([
      ["a 6-byte file", "tiny.py", "x = 1\n", "x = 0", "x = 2", "1: x = 1", "x = 2\n"],
      [
        "a changed line inside a function",
        "func.py",
        "import os\n\n\ndef f():\n    total = 1\n    return total\n\n\ndef g():\n    return 3\n\n\ndef h():\n    return 4\n",
        "def f():\n    total = 0\n    return total\n",
        "def f():\n    total = 10\n    return total\n",
        "4: def f():\n5:     total = 1\n6:     return total",
        "import os\n\n\ndef f():\n    total = 10\n    return total\n\n\ndef g():\n    return 3\n\n\ndef h():\n    return 4\n",
      ],
      [
        "a CRLF file edited with an agent's stale indentation",
        "crlf.ts",
        "function f() {\r\n    return 1;\r\n}\r\n",
        "function f() {\n  return 0;",
        "function f() {\n  return 2;",
        "1: function f() {",
        "function f() {\r\n  return 2;\r\n}\r\n",
      ],
      [
        "a format string with + and %",
        "fmt.c",
        'printf("%02x %20s", a+b);\n',
        'printf("%02x %20s", a+c);',
        'printf("%02x %20s", a+d);',
        '1: printf("%02x %20s", a+b);',
        'printf("%02x %20s", a+d);\n',
      ],
    ])(
      "%s: the retry, fetched as returned, succeeds",
      async (_name, rel, before, old, replacement, excerptPart, after) => {
        writeAsAgent(file(rel), before);
        const body = await agentGet<Body>(
          url(
            s.m!,
            "e",
            [
              ["path", rel],
              ["old", old],
            ],
            replacement,
          ),
        );
        expect(body).toMatchObject({ ok: false, errorCode: "edit_no_match", errorDetail: { occurrences: 0 } });
        expect(String(body.excerpt)).toContain(excerptPart);
        expect(typeof body.retry).toBe("string");
        // The retry carries the current text, never the same old= again.
        expect(body.retry).not.toBe(
          url(
            s.m!,
            "e",
            [
              ["path", rel],
              ["old", old],
            ],
            replacement,
          ),
        );
        expect(fs.readFileSync(file(rel), "utf8")).toBe(before);
        const retried = await agentGet<Body>(String(body.retry));
        expect(retried).toMatchObject({ ok: true });
        expect(fs.readFileSync(file(rel), "utf8")).toBe(after);
      },
    );

    it("offers no retry that the gateway would refuse as too long (old staged as a blob)", async () => {
      const line = (c: string) => `${c}${"x".repeat(7000)}`;
      writeAsAgent(file("long.txt"), `${line("a")}\n${line("b")}\n`);
      const stale = `${line("a")}\n${line("c")}\n`;
      await agentGet(
        url(
          s.m!,
          "s",
          [
            ["blob", "stale-old"],
            ["i", 0],
            ["count", 2],
          ],
          stale.slice(0, 7000),
        ),
      );
      await agentGet(
        url(
          s.m!,
          "s",
          [
            ["blob", "stale-old"],
            ["i", 1],
            ["count", 2],
          ],
          stale.slice(7000),
        ),
      );
      const body = await agentGet<Body>(
        url(
          s.m!,
          "e",
          [
            ["path", "long.txt"],
            ["oldBlob", "stale-old"],
            ["oldCount", 2],
          ],
          "short\n",
        ),
      );
      expect(body).toMatchObject({
        ok: false,
        errorCode: "edit_no_match",
        errorDetail: { nearest: { startLine: 1, endLine: 2 } },
      });
      expect(body.retry).toBeUndefined();
      expect(String(body.excerpt)).toContain("1: axxx");
    });

    it.each([
      [
        "old was a fragment of a longer line",
        "frag.txt",
        "say hello wonderful world\n",
        "hello wnderful",
        "hi",
        undefined,
      ],
      ["new is already in the file", "done.py", "a = 2\n", "a = 1", "a = 2", 1],
      ["nothing in the file is like old", "far.txt", "alpha\nbeta\n", "zzzz qqqq", "x", undefined],
    ])(
      "%s: excerpt, no retry that could replace text old never named",
      async (_name, rel, before, old, replacement, alreadyAt) => {
        writeAsAgent(file(rel), before);
        const body = await agentGet<Body>(
          url(
            s.m!,
            "e",
            [
              ["path", rel],
              ["old", old],
            ],
            replacement,
          ),
        );
        expect(body).toMatchObject({ ok: false, errorCode: "edit_no_match" });
        expect(body.retry).toBeUndefined();
        expect(String(body.excerpt)).toContain("1: ");
        expect(body.errorDetail?.newAlreadyAtLine).toBe(alreadyAt);
        expect(fs.readFileSync(file(rel), "utf8")).toBe(before);
        // The read URL shows the current text.
        expect(await agentGet<Body>(String(body.read))).toMatchObject({ ok: true });
      },
    );
  });

  describe("stale_read reads only the unseen lines", () => {
    type ReadBody = {
      ok: boolean;
      files: Array<{ startLine: number; endLine: number; content: string; next?: string }>;
      next?: string;
    };
    const readAll = async (first: string) => {
      const shown: Array<[number, number]> = [];
      let page = await agentGet<ReadBody>(first);
      for (let hops = 0; hops < 20; hops++) {
        expect(page.ok).toBe(true);
        shown.push([page.files[0]!.startLine, page.files[0]!.endLine]);
        const next = page.next ?? page.files[0]!.next;
        if (!next) break;
        page = await agentGet<ReadBody>(next);
      }
      return shown;
    };
    it.each([
      ["UTF-8, first line seen", "utf-8", "\n", [[1, 1]], [[2, 5]]],
      [
        "UTF-8 CRLF, lines 1 and 3 seen",
        "utf-8",
        "\r\n",
        [
          [1, 1],
          [3, 1],
        ],
        [
          [2, 2],
          [4, 5],
        ],
      ],
      ["UTF-16LE with BOM, last two lines seen", "utf-16le", "\n", [[4, 2]], [[1, 3]]],
      [
        "UTF-8 with BOM, middle seen",
        "utf-8-bom",
        "\n",
        [[2, 3]],
        [
          [1, 1],
          [5, 5],
        ],
      ],
    ] as Array<[string, TextEncoding, string, Array<[number, number]>, Array<[number, number]>]>)(
      "%s: read (or reads) ask for exactly the unseen lines, then retry succeeds",
      async (name, encoding, nl, seen, unseen) => {
        const rel = `seen-${name.replace(/\W+/g, "-")}.txt`;
        const before = ["alpha", "béta", "gamma 😀", "delta", "epsilon"].join(nl) + nl;
        writeAsAgent(file(rel), encodeText(before, encoding));
        for (const [offset, limit] of seen)
          await agentGet(
            url(s.r, "r", [
              ["path", rel],
              ["offset", offset],
              ["limit", limit],
            ]),
          );
        const refused = await agentGet<Body>(url(s.m!, "w", [["path", rel]], "replaced\n"));
        expect(refused).toMatchObject({ ok: false, errorCode: "stale_read", errorDetail: { unseenLines: unseen } });
        const reads = unseen.length > 1 ? (refused.reads as string[]) : [refused.read as string];
        expect(reads).toHaveLength(unseen.length);
        expect(reads[0]).toBe(refused.read);
        for (const [i, read] of reads.entries()) expect(await readAll(read)).toEqual([unseen[i]]);
        expect(await agentGet<Body>(String(refused.retry))).toMatchObject({ ok: true, created: false, encoding });
      },
    );
  });

  describe("/w over an existing binary file", () => {
    const png = () =>
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52]);
    it.each([
      ["fetched as returned", false],
      ["after the agent followed read first (a binary read records nothing, so no loop)", true],
    ])("answers a repair naming its version, which replaces it %s", async (name, readFirst) => {
      const rel = `image-${readFirst ? "read" : "direct"}.png`;
      writeAsAgent(file(rel), png());
      const refused = await agentGet<Body>(url(s.m!, "w", [["path", rel]], "now text\n"));
      expect(refused).toMatchObject({
        ok: false,
        errorCode: "stale_read",
        agentAction: "fetch_repair",
        errorDetail: { binary: true, size: 16 },
      });
      expect(refused.repair).toBe(refused.retry);
      expect(fs.readFileSync(file(rel)).equals(png())).toBe(true);
      if (readFirst)
        expect(await agentGet<Body>(String(refused.read))).toMatchObject({
          ok: true,
          files: [{ kind: "binary", fingerprint: refused.errorDetail?.fingerprint }],
        });
      expect(await agentGet<Body>(String(refused.repair))).toMatchObject({ ok: true, created: false, bytes: 9 });
      expect(fs.readFileSync(file(rel), "utf8")).toBe("now text\n");
    });

    it("a repair for a version that changed since is refused with the new version's repair, which then works", async () => {
      writeAsAgent(file("moving.bin"), png());
      const first = await agentGet<Body>(url(s.m!, "w", [["path", "moving.bin"]], "mine\n"));
      const other = Buffer.concat([png(), Buffer.from([0, 1, 2])]);
      writeAsAgent(file("moving.bin"), other);
      const second = await agentGet<Body>(String(first.repair));
      expect(second).toMatchObject({ ok: false, errorCode: "stale_read", errorDetail: { binary: true, size: 19 } });
      expect(second.repairHint).toContain("changed since");
      expect(fs.readFileSync(file("moving.bin")).equals(other)).toBe(true);
      expect(await agentGet<Body>(String(second.repair))).toMatchObject({ ok: true });
      expect(fs.readFileSync(file("moving.bin"), "utf8")).toBe("mine\n");
    });

    it("replaces= does not waive the full read of a text file", async () => {
      writeAsAgent(file("text.txt"), "keep me\n");
      const body = await agentGet<Body>(
        url(
          s.m!,
          "w",
          [
            ["path", "text.txt"],
            ["replaces", "0".repeat(32)],
          ],
          "gone\n",
        ),
      );
      expect(body).toMatchObject({ ok: false, errorCode: "stale_read", errorDetail: { unseenBytes: 8 } });
      expect(fs.readFileSync(file("text.txt"), "utf8")).toBe("keep me\n");
    });
  });

  describe("apply_patch rollback reports what is on disk", () => {
    const long = "y".repeat(300);
    it.each([
      ["an Add whose name is too long, below a folder the patch creates", `fresh/${long}.txt`, "invalid_path", false],
      ["an Add two folders deep with a name too long", `fresh/sub/${long}.txt`, "invalid_path", false],
      ["an Add through an existing file", "blocker/child.txt", "patch_commit_failed", true],
    ])("%s: rolledBack true, the tree exactly as before, no stop", async (name, addPath, code, retryable) => {
      const root = path.join(t.projectDir, `rb-${name.replace(/\W+/g, "-")}`);
      writeFiles(root, { "a.txt": "a\n", blocker: "a file where a folder is needed\n" });
      const rel = path.relative(t.projectDir, root);
      const before = snapshotTree(root);
      const body = await agentGet<Body>(
        url(
          s.m!,
          "a",
          [],
          patchText(`*** Update File: ${rel}/a.txt`, "@@", "-a", "+A", `*** Add File: ${rel}/${addPath}`, "+1"),
        ),
      );
      expect(body).toMatchObject({
        ok: false,
        errorCode: code,
        retryable,
        errorDetail: { rolledBack: true, appliedBeforeFailure: 1 },
      });
      expect(body.agentAction).not.toBe("stop");
      expect(snapshotTree(root)).toEqual(before);
      if (!retryable) {
        expect(body.retry).toBeUndefined();
        return;
      }
      // Once the cause is gone, the retry as returned applies the whole patch.
      fs.rmSync(path.join(root, "blocker"));
      expect(await agentGet<Body>(String(body.retry))).toMatchObject({ ok: true });
      expect(fs.readFileSync(path.join(root, "a.txt"), "utf8")).toBe("A\n");
      expect(fs.readFileSync(path.join(root, addPath), "utf8")).toBe("1\n");
    });
  });

  describe("replays say when the project changed since", () => {
    it.each([
      [
        "/e",
        "replay-e.txt",
        "one\n",
        () =>
          url(
            s.m!,
            "e",
            [
              ["path", "replay-e.txt"],
              ["old", "one"],
            ],
            "two",
          ),
        ["/project/replay-e.txt"],
      ],
      [
        "/w (a new file)",
        "replay-w.txt",
        undefined,
        () => url(s.m!, "w", [["path", "replay-w.txt"]], "made\n"),
        ["/project/replay-w.txt"],
      ],
      [
        "/a",
        "replay-a.txt",
        "x\n",
        () =>
          url(
            s.m!,
            "a",
            [],
            patchText("*** Update File: replay-a.txt", "@@", "-x", "+y", "*** Add File: replay-a2.txt", "+z"),
          ),
        ["/project/replay-a.txt", "/project/replay-a2.txt"],
      ],
      [
        "a failed /e",
        "replay-f.txt",
        "alpha\n",
        () =>
          url(
            s.m!,
            "e",
            [
              ["path", "replay-f.txt"],
              ["old", "omega"],
            ],
            "beta",
          ),
        ["/project/replay-f.txt"],
      ],
    ] as Array<[string, string, string | undefined, () => string, string[]]>)(
      "%s: changedSince with a read of the files it named, only once the epoch moved",
      async (_name, rel, before, call, paths) => {
        if (before !== undefined) writeAsAgent(file(rel), before);
        const first = await agentGet<Body>(call());
        expect(first.changedSince).toBeUndefined();
        const same = await agentGet<Body>(call());
        expect(same).toMatchObject({ dedupe: "replayed" });
        expect(same.changedSince).toBeUndefined();
        // Another mutation (of another file) moves the project's state epoch.
        expect(await agentGet<Body>(url(s.m!, "w", [["path", `${rel}.other`]], String(Math.random())))).toMatchObject({
          ok: true,
        });
        const later = await agentGet<Body & { changedSince?: { hint: string; read?: string } }>(call());
        expect(later).toMatchObject({
          ok: first.ok,
          dedupe: "replayed",
          changedSince: { hint: expect.stringContaining("changed since") },
        });
        expect(later.changedSince!.read).toBe(
          url(
            s.r,
            "r",
            paths.map((p): [string, string] => ["path", p]),
          ),
        );
        const read = await agentGet<{ ok: boolean; files: Array<{ path: string; content: string }> }>(
          later.changedSince!.read!,
        );
        expect(read.ok).toBe(true);
        expect(read.files.map((f) => f.path)).toEqual(paths);
        expect(read.files[0]!.content).toBe(fs.readFileSync(file(rel), "utf8"));
      },
    );
  });
});
