// /o parses in a worker thread (server/kernel/read/outline-worker.ts): a 2 MiB file keeps tree-sitter busy for
// about half a second, and the TypeScript compiler takes a second to load, during which the bridge's event loop
// must keep answering every other call. Counted, not timed: how many /t of another session are answered while
// one /o is in flight (on the event loop, only those that slip in before and between the parse's own steps).
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_OUTLINE_FILE_BYTES } from "../../../server/kernel/limits.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url } from "../mutation/fixtures.js";

/**
 * /t answers of the other session while one /o is in flight, at least. Measured: ~900 with the worker; 12 (Python)
 * and 77 (TypeScript, whose first load interleaves a little) with the parse on the event loop.
 */
const ANSWERED_MEANWHILE = 200;

function pythonOf(bytes: number): { text: string; classes: number } {
  const parts: string[] = [];
  let size = 0;
  let classes = 0;
  while (size < bytes) {
    const part = `class C${classes}:\n    def m(self, x):\n        return x + ${classes}\n\n`;
    if (size + part.length > bytes) break;
    parts.push(part);
    size += part.length;
    classes++;
  }
  return { text: parts.join(""), classes };
}

function typescriptOf(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; ; i++) {
    const part = `export interface I${i} { a: number; b(x: string): void }\n`;
    if (size + part.length > bytes) break;
    parts.push(part);
    size += part.length;
  }
  return parts.join("");
}

describe("/o of a large file", () => {
  let t: TestBridge;
  let outliner: AgentSession;
  let other: AgentSession;
  let classes: number;

  beforeAll(async () => {
    t = await startTestBridge();
    const python = pythonOf(MAX_OUTLINE_FILE_BYTES);
    classes = python.classes;
    fs.writeFileSync(path.join(t.projectDir, "big.py"), python.text);
    fs.writeFileSync(path.join(t.projectDir, "big.ts"), typescriptOf(MAX_OUTLINE_FILE_BYTES));
    fs.writeFileSync(path.join(t.projectDir, "small.txt"), "small\n");
    outliner = await t.session({ name: "outliner" });
    other = await t.session({ name: "other" });
  });
  afterAll(async () => t.close());

  it.each(["big.py", "big.ts"])(
    "leaves the event loop to other sessions while %s is parsed",
    { timeout: 120_000 },
    async (file) => {
      let pending = true;
      const outline = agentGet<{ ok: boolean; declarations: unknown[]; truncated: boolean }>(
        url(outliner.r, "o", [["path", file]]),
      ).finally(() => (pending = false));
      let answered = 0;
      while (pending) {
        expect(await agentGet(url(other.r, "t", [["path", "small.txt"]]))).toMatchObject({ ok: true });
        if (pending) answered++;
      }
      const body = await outline;
      expect(body).toMatchObject({ ok: true, truncated: true });
      expect(body.declarations.length).toBeGreaterThan(0);
      expect(answered).toBeGreaterThanOrEqual(ANSWERED_MEANWHILE);
      expect(classes).toBeGreaterThan(600);
    },
  );
});
