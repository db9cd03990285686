// Issue 14 "repairs that repair": each mutation repair URL, fetched exactly as returned, succeeds or makes
// measurable progress (real gateway, real files).
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

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
      ["a CRLF file edited with an agent's stale indentation", "crlf.ts", "function f() {\r\n    return 1;\r\n}\r\n", "function f() {\n  return 0;", "function f() {\n  return 2;", "1: function f() {", "function f() {\r\n  return 2;\r\n}\r\n"],
      ["a format string with + and %", "fmt.c", 'printf("%02x %20s", a+b);\n', 'printf("%02x %20s", a+c);', 'printf("%02x %20s", a+d);', '1: printf("%02x %20s", a+b);', 'printf("%02x %20s", a+d);\n'],
    ])("%s: the retry, fetched as returned, succeeds", async (_name, rel, before, old, replacement, excerptPart, after) => {
      fs.writeFileSync(file(rel), before);
      const body = await agentGet<Body>(url(s.m!, "e", [["path", rel], ["old", old]], replacement));
      expect(body).toMatchObject({ ok: false, errorCode: "edit_no_match", errorDetail: { occurrences: 0 } });
      expect(String(body.excerpt)).toContain(excerptPart);
      expect(typeof body.retry).toBe("string");
      // The retry carries the current text, never the same old= again.
      expect(body.retry).not.toBe(url(s.m!, "e", [["path", rel], ["old", old]], replacement));
      expect(fs.readFileSync(file(rel), "utf8")).toBe(before);
      const retried = await agentGet<Body>(String(body.retry));
      expect(retried).toMatchObject({ ok: true });
      expect(fs.readFileSync(file(rel), "utf8")).toBe(after);
    });

    it.each([
      ["old was a fragment of a longer line", "frag.txt", "say hello wonderful world\n", "hello wnderful", "hi", undefined],
      ["new is already in the file", "done.py", "a = 2\n", "a = 1", "a = 2", 1],
      ["nothing in the file is like old", "far.txt", "alpha\nbeta\n", "zzzz qqqq", "x", undefined],
    ])("%s: excerpt, no retry that could replace text old never named", async (_name, rel, before, old, replacement, alreadyAt) => {
      fs.writeFileSync(file(rel), before);
      const body = await agentGet<Body>(url(s.m!, "e", [["path", rel], ["old", old]], replacement));
      expect(body).toMatchObject({ ok: false, errorCode: "edit_no_match" });
      expect(body.retry).toBeUndefined();
      expect(String(body.excerpt)).toContain("1: ");
      expect(body.errorDetail?.newAlreadyAtLine).toBe(alreadyAt);
      expect(fs.readFileSync(file(rel), "utf8")).toBe(before);
      // The read URL shows the current text.
      expect(await agentGet<Body>(String(body.read))).toMatchObject({ ok: true });
    });
  });
});
