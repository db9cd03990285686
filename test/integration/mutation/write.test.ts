import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string };

describe("write (/w)", () => {
  let t: TestBridge;
  let s: AgentSession;
  const file = (rel: string) => path.join(t.projectDir, rel);
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true });
  });
  afterAll(async () => t.close());

  it("creates a new file and its parent directories", async () => {
    const body = await agentGet<Body>(url(s.m!, "w", [["path", "deep/er/new.ts"]], "export const x = 1;\n"));
    expect(body).toMatchObject({
      ok: true,
      path: "/project/deep/er/new.ts",
      created: true,
      bytes: 20,
      state: "succeeded",
    });
    expect(fs.readFileSync(file("deep/er/new.ts"), "utf8")).toBe("export const x = 1;\n");
    expect(fs.readdirSync(file("deep/er"))).toEqual(["new.ts"]);
  });

  it("refuses to replace a file the session has not read, with exact read and retry URLs that then work", async () => {
    writeAsAgent(file("stale.txt"), "old content\n");
    const refused = await agentGet<Body>(url(s.m!, "w", [["path", "stale.txt"]], "new content\n"));
    expect(refused).toMatchObject({
      ok: false,
      errorCode: "stale_read",
      agentAction: "reread_then_retry",
      errorDetail: { unseenBytes: 12, size: 12 },
      read: url(s.r, "r", [["path", "/project/stale.txt"]]),
    });
    expect(fs.readFileSync(file("stale.txt"), "utf8")).toBe("old content\n");
    // The failure is recorded: replaying the same URL after reading still answers the same failure...
    await agentGet(refused.read as string);
    expect(await agentGet<Body>(url(s.m!, "w", [["path", "stale.txt"]], "new content\n"))).toMatchObject({
      errorCode: "stale_read",
      dedupe: "replayed",
    });
    // ...while the retry URL is a fresh identity for the same write.
    const run = /&run=(r[0-9a-f]{10})&/.exec(refused.retry as string)?.[1];
    expect(refused.retry).toBe(
      url(
        s.m!,
        "w",
        [
          ["path", "stale.txt"],
          ["run", run!],
        ],
        "new content\n",
      ),
    );
    expect(await agentGet<Body>(refused.retry as string)).toMatchObject({ ok: true, created: false });
    expect(fs.readFileSync(file("stale.txt"), "utf8")).toBe("new content\n");
  });

  it("answers a unified diff: of the created content, and of the replaced text, which a replay shows again", async () => {
    const created = await agentGet<Body>(url(s.m!, "w", [["path", "diffed.txt"]], "a\nb\nc\n"));
    expect(created.diff).toBe(
      ["--- /project/diffed.txt", "+++ /project/diffed.txt", "@@ -0,0 +1,3 @@", "+a", "+b", "+c"].join("\n"),
    );
    writeAsAgent(file("diffed.txt"), "one\r\ntwo\r\nthree\r\nfour\r\nfive\r\nsix\r\nseven\r\n");
    await agentGet(url(s.r, "r", [["path", "diffed.txt"]]));
    const replace = url(s.m!, "w", [["path", "diffed.txt"]], "one\ntwo\nthree\nFOUR\nfive\nsix\nseven\n");
    const replaced = await agentGet<Body>(replace);
    expect(replaced).toMatchObject({ ok: true, created: false, newline: "crlf" });
    // Only the changed line and its context; the file's CRLF newlines are shown as \n.
    expect(replaced.diff).toBe(
      [
        "--- /project/diffed.txt",
        "+++ /project/diffed.txt",
        "@@ -1,7 +1,7 @@",
        " one",
        " two",
        " three",
        "-four",
        "+FOUR",
        " five",
        " six",
        " seven",
      ].join("\n"),
    );
    expect(fs.readFileSync(file("diffed.txt"), "utf8")).toBe("one\r\ntwo\r\nthree\r\nFOUR\r\nfive\r\nsix\r\nseven\r\n");
    // The file changes again; the same URL replays the answer it gave, diff included.
    writeAsAgent(file("diffed.txt"), "else\n");
    expect(await agentGet<Body>(replace)).toMatchObject({ dedupe: "replayed", diff: replaced.diff });
    await agentGet(url(s.r, "r", [["path", "diffed.txt"]]));
    const unchanged = await agentGet<Body>(url(s.m!, "w", [["path", "diffed.txt"]], "else\n"));
    expect(unchanged).toMatchObject({ ok: true, unchanged: true });
    expect(unchanged.diff).toBeUndefined();
  });

  it("accumulates coverage across next pages, and a change after reading makes the read stale", async () => {
    writeAsAgent(file("paged.txt"), "one\ntwo\nthree\n");
    let page = await agentGet<{ files: Array<{ next?: string }>; next?: string }>(
      url(s.r, "r", [
        ["path", "paged.txt"],
        ["limit", 1],
      ]),
    );
    const partial = await agentGet<Body>(url(s.m!, "w", [["path", "paged.txt"]], "x"));
    expect(partial).toMatchObject({ errorCode: "stale_read", errorDetail: { unseenBytes: 10 } });
    for (let next = page.next ?? page.files[0]?.next; next; next = page.next ?? page.files[0]?.next)
      page = await agentGet(next);
    writeAsAgent(file("paged.txt"), "one\ntwo\nTHREE\n");
    expect(
      await agentGet<Body>(
        url(
          s.m!,
          "w",
          [
            ["path", "paged.txt"],
            ["run", "b"],
          ],
          "x",
        ),
      ),
    ).toMatchObject({ errorCode: "stale_read" });
    await agentGet(url(s.r, "r", [["path", "paged.txt"]]));
    expect(
      await agentGet<Body>(
        url(
          s.m!,
          "w",
          [
            ["path", "paged.txt"],
            ["run", "c"],
          ],
          "x\n",
        ),
      ),
    ).toMatchObject({ ok: true });
    // Any mutation invalidates what was read: a second replacement needs a new read.
    expect(
      await agentGet<Body>(
        url(
          s.m!,
          "w",
          [
            ["path", "paged.txt"],
            ["run", "d"],
          ],
          "y\n",
        ),
      ),
    ).toMatchObject({ errorCode: "stale_read" });
  });

  it.each([
    [
      "UTF-8 with BOM and CRLF",
      Buffer.from("\ufeffa\r\nb\r\n", "utf8"),
      Buffer.from("\ufeffnew\r\nlines\r\n", "utf8"),
      "utf-8-bom",
    ],
    [
      "UTF-16LE with CR",
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("a\rb\r", "utf16le")]),
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("new\rlines\r", "utf16le")]),
      "utf-16le",
    ],
    [
      "UTF-16BE with LF",
      Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from("a\nb\n", "utf16le").swap16()]),
      Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from("new\nlines\n", "utf16le").swap16()]),
      "utf-16be",
    ],
  ])("keeps mode, encoding, BOM and newline style when replacing a %s file", async (name, before, after, encoding) => {
    const rel = `keep-${name.replace(/\W+/g, "-")}.txt`;
    writeAsAgent(file(rel), before);
    fs.chmodSync(file(rel), 0o640);
    await agentGet(url(s.r, "r", [["path", rel]]));
    const body = await agentGet<Body>(url(s.m!, "w", [["path", rel]], "new\nlines\n"));
    expect(body).toMatchObject({ ok: true, encoding });
    expect(fs.readFileSync(file(rel)).equals(after)).toBe(true);
    expect(fs.statSync(file(rel)).mode & 0o777).toBe(0o640);
  });

  it("takes content from a staged blob, hashing the content rather than the blob name", async () => {
    const text = "staged line\n".repeat(300);
    const chunks = [text.slice(0, 1800), text.slice(1800)];
    for (const [i, chunk] of chunks.entries())
      await agentGet(
        url(
          s.m!,
          "s",
          [
            ["blob", "w1"],
            ["i", i],
            ["count", 2],
          ],
          chunk,
        ),
      );
    const staged = await agentGet<Body>(
      url(s.m!, "w", [
        ["path", "staged.txt"],
        ["blob", "w1"],
        ["count", 2],
      ]),
    );
    expect(staged).toMatchObject({ ok: true, bytes: text.length });
    expect(fs.readFileSync(file("staged.txt"), "utf8")).toBe(text);
    const inline = await agentGet<Body>(url(s.m!, "w", [["path", "staged.txt"]], text.slice(0, 10)));
    expect(inline.callId).not.toBe(staged.callId);
    expect(
      await agentGet<Body>(
        url(
          s.m!,
          "w",
          [
            ["path", "x.txt"],
            ["blob", "w1"],
          ],
          "inline too",
        ),
      ),
    ).toMatchObject({ errorCode: "conflicting_parameters" });
    expect(await agentGet<Body>(url(s.m!, "w", [["path", "x.txt"]]))).toMatchObject({ errorCode: "missing_parameter" });
  });

  it("reports a refused write as write_failed and leaves the tree as it was", async () => {
    writeAsAgent(file("plain-file"), "not a directory\n");
    const body = await agentGet<Body>(url(s.m!, "w", [["path", "plain-file/child.txt"]], "x"));
    expect(body).toMatchObject({
      ok: false,
      errorCode: "write_failed",
      errorDetail: { path: "/project/plain-file/child.txt", cause: "ENOTDIR" },
      retry: expect.stringContaining("run="),
    });
    expect(fs.readFileSync(file("plain-file"), "utf8")).toBe("not a directory\n");
  });

  it("stays inside the project", async () => {
    expect(await agentGet<Body>(url(s.m!, "w", [["path", "../escape.txt"]], "x"))).toMatchObject({
      ok: false,
      errorCode: "path_outside_root",
    });
    expect(fs.existsSync(path.join(path.dirname(t.projectDir), "escape.txt"))).toBe(false);
  });
});
