// UTF-32 (with BOM) and BOM-less UTF-16 through the whole data plane: /r shows the text, /e, /a and /w keep the
// encoding, the BOM (or its absence) and the newline style byte for byte; /g skips them as ripgrep does, with
// both engines, and /f still finds text in them.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENCODING_FACTS, encodeText, type TextEncoding } from "../../../server/text/index.js";
import {
  agentGet,
  makeTempDir,
  startTestBridge,
  type AgentSession,
  type TestBridge,
  writeAsAgent,
} from "../../helpers/bridge.js";
import { patchText, url } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string };
type ReadBody = Body & { files: Array<Record<string, unknown>> };

const CASES: Array<[string, TextEncoding, string, string]> = [
  ["UTF-32 LE + CRLF", "utf-32le", "\r\n", "crlf"],
  ["UTF-32 LE + LF", "utf-32le", "\n", "lf"],
  ["UTF-32 BE + CRLF", "utf-32be", "\r\n", "crlf"],
  ["UTF-32 BE + LF", "utf-32be", "\n", "lf"],
  ["BOM-less UTF-16 LE + CRLF", "utf-16le-no-bom", "\r\n", "crlf"],
  ["BOM-less UTF-16 LE + LF", "utf-16le-no-bom", "\n", "lf"],
  ["BOM-less UTF-16 BE + CRLF", "utf-16be-no-bom", "\r\n", "crlf"],
  ["BOM-less UTF-16 BE + LF", "utf-16be-no-bom", "\n", "lf"],
];

const lines = (nl: string, ...l: string[]) => l.join(nl) + nl;
const relOf = (prefix: string, name: string) => `${prefix}-${name.replace(/\W+/g, "-")}.txt`;

describe("UTF-32 and BOM-less UTF-16 round-trip through the data plane", () => {
  let t: TestBridge;
  let s: AgentSession;
  const file = (rel: string) => path.join(t.projectDir, rel);
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true });
  });
  afterAll(async () => t.close());

  it.each(CASES)("/r shows a %s file's text and reports its encoding", async (name, encoding, nl, newline) => {
    const rel = relOf("r", name);
    const text = lines(nl, "héllo wörld", "second line 😀");
    writeAsAgent(file(rel), encodeText(text, encoding));
    const body = await agentGet<ReadBody>(url(s.r, "r", [["path", rel]]));
    expect(body.files[0]).toMatchObject({
      kind: "file",
      encoding,
      newline,
      content: text,
      totalLines: 2,
      complete: true,
      size: encodeText(text, encoding).length,
    });
    expect(body.files[0]!.invalidUtf8).toBeUndefined();
  });

  it.each(CASES)(
    "/r pages a %s file by line, and its pages cover the disk bytes exactly (so /w may replace it)",
    async (name, encoding, nl) => {
      const rel = relOf("page", name);
      writeAsAgent(file(rel), encodeText(lines(nl, "one", "twö 😀", "three"), encoding));
      const replace = () => agentGet<Body>(url(s.m!, "w", [["path", rel]], "x\n"));
      for (const [offset, content] of [
        [1, "one"],
        [2, "twö 😀"],
      ] as const) {
        const body = await agentGet<ReadBody>(
          url(s.r, "r", [
            ["path", rel],
            ["offset", offset],
            ["limit", 1],
          ]),
        );
        expect(body.files[0]).toMatchObject({
          startLine: offset,
          endLine: offset,
          content: `${content}${nl}`,
          totalLines: 3,
        });
      }
      // Two of three lines seen: the third line's bytes (and only those) are unseen.
      expect(await replace()).toMatchObject({
        ok: false,
        errorCode: "stale_read",
        errorDetail: { unseenBytes: encodeText(`three${nl}`, encoding).length - ENCODING_FACTS[encoding].bom.length },
      });
      await agentGet(
        url(s.r, "r", [
          ["path", rel],
          ["offset", 3],
          ["limit", 1],
        ]),
      );
      expect(
        await agentGet<Body>(
          url(
            s.m!,
            "w",
            [
              ["path", rel],
              ["run", "after-pages"],
            ],
            "x\n",
          ),
        ),
      ).toMatchObject({ ok: true, encoding });
    },
  );

  it.each(CASES)("/e edits a %s file and keeps every other byte", async (name, encoding, nl) => {
    const rel = relOf("e", name);
    writeAsAgent(file(rel), encodeText(lines(nl, "héllo", "one", "two", "wörld 😀"), encoding));
    fs.chmodSync(file(rel), 0o600);
    const body = await agentGet<Body>(
      url(
        s.m!,
        "e",
        [
          ["path", rel],
          ["old", "one\ntwo"],
        ],
        "ONE\n2a\n2b",
      ),
    );
    expect(body).toMatchObject({ ok: true, line: 2, encoding });
    expect(
      fs.readFileSync(file(rel)).equals(encodeText(lines(nl, "héllo", "ONE", "2a", "2b", "wörld 😀"), encoding)),
    ).toBe(true);
    expect(fs.statSync(file(rel)).mode & 0o777).toBe(0o600);
  });

  it.each(CASES)("/a patches a %s file and keeps every other byte", async (name, encoding, nl) => {
    const rel = relOf("a", name);
    writeAsAgent(file(rel), encodeText(lines(nl, "alpha", "beta", "gamma", "délta"), encoding));
    const body = await agentGet<Body>(
      url(
        s.m!,
        "a",
        [],
        patchText(`*** Update File: ${rel}`, "@@", " alpha", "-beta", "+BETA", "+beta2", "@@", "-délta", "+DÉLTA"),
      ),
    );
    expect(body).toMatchObject({ ok: true });
    expect(
      fs.readFileSync(file(rel)).equals(encodeText(lines(nl, "alpha", "BETA", "beta2", "gamma", "DÉLTA"), encoding)),
    ).toBe(true);
  });

  it.each(CASES)(
    "/w replaces a fully read %s file in its own encoding and newline style",
    async (name, encoding, nl) => {
      const rel = relOf("w", name);
      writeAsAgent(file(rel), encodeText(lines(nl, "old", "content"), encoding));
      await agentGet(url(s.r, "r", [["path", rel]]));
      const body = await agentGet<Body>(url(s.m!, "w", [["path", rel]], "new\nlines here\n"));
      expect(body).toMatchObject({ ok: true, created: false, encoding });
      expect(fs.readFileSync(file(rel)).equals(encodeText(lines(nl, "new", "lines here"), encoding))).toBe(true);
    },
  );

  it.each<[string, Buffer]>([
    ["UTF-32 LE above U+10FFFF", Buffer.concat([encodeText("one\ntwo\n", "utf-32le"), Buffer.from([0, 0, 0x11, 0])])],
    [
      "UTF-32 BE with a surrogate code point",
      Buffer.concat([encodeText("one\ntwo\n", "utf-32be"), Buffer.from([0, 0, 0xd8, 0])]),
    ],
  ])("/r shows %s with U+FFFD, and /w, replacing it whole, writes UTF-8", async (name, bytes) => {
    const rel = relOf("bad", name);
    writeAsAgent(file(rel), bytes);
    const body = await agentGet<ReadBody>(url(s.r, "r", [["path", rel]]));
    expect(body.files[0]).toMatchObject({ content: "one\ntwo\n\ufffd", complete: true });
    expect(await agentGet<Body>(url(s.m!, "w", [["path", rel]], "fresh\n"))).toMatchObject({
      ok: true,
      encoding: "utf-8",
    });
    expect(fs.readFileSync(file(rel), "utf8")).toBe("fresh\n");
  });
});

describe("/g skips UTF-32 and BOM-less UTF-16 as ripgrep does; /f searches them", () => {
  const bridges: TestBridge[] = [];
  const sessions: Record<string, AgentSession> = {};
  const TREE: Record<string, Buffer> = {
    "plain.txt": Buffer.from("needle in UTF-8\n"),
    "bom16.txt": encodeText("needle in UTF-16 with BOM\n", "utf-16le"),
    "nobom16.txt": encodeText("needle in BOM-less UTF-16\n", "utf-16le-no-bom"),
    "utf32.txt": encodeText("needle in UTF-32\n", "utf-32be"),
  };
  beforeAll(async () => {
    const root = makeTempDir("encodings-search");
    for (const [rel, bytes] of Object.entries(TREE)) writeAsAgent(path.join(root, rel), bytes);
    for (const engine of ["rg", "fallback"]) {
      const bridge = await startTestBridge({ URLBRIDGE_GREP_ENGINE: engine });
      bridges.push(bridge);
      sessions[engine] = await bridge.session({ root });
    }
  });
  afterAll(async () => {
    for (const bridge of bridges) await bridge.close();
  });

  it.each(["rg", "fallback"])(
    "a directory search with the %s engine lists only UTF-8 and BOM-marked UTF-16 files",
    async (engine) => {
      const body = await agentGet<Body & { files: Array<{ path: string }> }>(
        url(sessions[engine]!.r, "g", [], "needle"),
      );
      expect(body).toMatchObject({ ok: true, engine });
      expect(body.files.map((f) => f.path)).toEqual(["/project/bom16.txt", "/project/plain.txt"]);
    },
  );

  it.each([
    ["rg", "nobom16.txt", "utf-16le-no-bom"],
    ["fallback", "utf32.txt", "utf-32be"],
  ])(
    "with the %s engine, naming %s in path= says it is skipped and points at /r and /f",
    async (engine, rel, encoding) => {
      const body = await agentGet<Body>(url(sessions[engine]!.r, "g", [["path", rel]], "needle"));
      expect(body).toMatchObject({
        ok: false,
        errorCode: "binary_file",
        errorDetail: { path: `/project/${rel}`, encoding },
      });
      expect(String(body.error ?? body.message ?? JSON.stringify(body))).toContain("/f?query=");
    },
  );

  it("/f query= finds lines in every one of them", async () => {
    const body = await agentGet<Body & { results: Array<{ path: string; line?: number }> }>(
      url(sessions.rg!.r, "f", [["query", "needle"]]),
    );
    expect(body.results.map((r) => [r.path, r.line])).toEqual([
      ["/project/bom16.txt", 1],
      ["/project/nobom16.txt", 1],
      ["/project/plain.txt", 1],
      ["/project/utf32.txt", 1],
    ]);
  });
});
