import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { patchText, url } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string };

// Files the exact decoder (server/text/decode.ts) refuses: an edit or a patch must answer an error and leave
// every byte as it was, never write back what a lossy decode showed (U+FFFD for Latin-1's é).
const REFUSED: Array<[string, Buffer, string]> = [
  ["Latin-1 (not UTF-8)", Buffer.from("caf\xe9 one\r\ntwo\r\n", "latin1"), "unsupported_encoding"],
  [
    "UTF-8 with one stray byte",
    Buffer.concat([Buffer.from("héllo one\n"), Buffer.from([0xff]), Buffer.from("\ntwo\n")]),
    "unsupported_encoding",
  ],
  // UTF-32 with a BOM is edited since the codec learnt it (encoding-round-trips.test.ts); one that does not
  // decode (a code point above U+10FFFF, a surrogate, a partial unit) is still refused.
  [
    "UTF-32 LE above U+10FFFF",
    Buffer.concat([
      Buffer.from([0xff, 0xfe, 0, 0]),
      ...[..."one\ntwo\n"].map((c) => Buffer.from([c.charCodeAt(0), 0, 0, 0])),
      Buffer.from([0, 0, 0x11, 0]),
    ]),
    "unsupported_encoding",
  ],
  [
    "UTF-32 BE with a surrogate",
    Buffer.concat([
      Buffer.from([0, 0, 0xfe, 0xff]),
      ...[..."one\ntwo\n"].map((c) => Buffer.from([0, 0, 0, c.charCodeAt(0)])),
      Buffer.from([0, 0, 0xdc, 0]),
    ]),
    "unsupported_encoding",
  ],
  [
    "UTF-32 LE with a partial unit",
    Buffer.concat([
      Buffer.from([0xff, 0xfe, 0, 0]),
      ...[..."one\ntwo\n"].map((c) => Buffer.from([c.charCodeAt(0), 0, 0, 0])),
      Buffer.from([0x78, 0]),
    ]),
    "unsupported_encoding",
  ],
  // BOM-less UTF-16 (sniffed from its first 64 KiB) with a lone surrogate after the sample.
  [
    "BOM-less UTF-16 with a late lone surrogate",
    Buffer.concat([
      Buffer.from("one\ntwo\n" + "x".repeat(40_000) + "\n", "utf16le"),
      Buffer.from([0x00, 0xd8]),
      Buffer.from("\n", "utf16le"),
    ]),
    "unsupported_encoding",
  ],
  ["binary (a NUL byte)", Buffer.from("one\0\ntwo\n"), "binary_file"],
];

describe("mutations never rewrite a file they cannot round-trip", () => {
  let t: TestBridge;
  let s: AgentSession;
  const file = (rel: string) => path.join(t.projectDir, rel);
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true });
  });
  afterAll(async () => t.close());

  it.each(REFUSED)("/e refuses %s and leaves its bytes", async (name, bytes, code) => {
    const rel = `e-${name.replace(/\W+/g, "-")}.txt`;
    writeAsAgent(file(rel), bytes);
    const body = await agentGet<Body>(
      url(
        s.m!,
        "e",
        [
          ["path", rel],
          ["old", "two"],
        ],
        "TWO",
      ),
    );
    expect(body).toMatchObject({ ok: false, errorCode: code, retryable: false });
    expect(fs.readFileSync(file(rel)).equals(bytes)).toBe(true);
  });

  it.each(REFUSED)("/a refuses %s and leaves its bytes", async (name, bytes, code) => {
    const rel = `a-${name.replace(/\W+/g, "-")}.txt`;
    writeAsAgent(file(rel), bytes);
    const body = await agentGet<Body>(url(s.m!, "a", [], patchText(`*** Update File: ${rel}`, "@@", "-two", "+TWO")));
    expect(body).toMatchObject({ ok: false, errorCode: code });
    expect(fs.readFileSync(file(rel)).equals(bytes)).toBe(true);
  });
});
