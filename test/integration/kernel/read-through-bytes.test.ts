// A file read through by /r pages over HTTP: each answer's bytes are exactly the JSON text of what the agent
// parses (the pages' content is written from the file's bytes, server/text/utf8-json.ts), and the pages join to
// the file's text, for ASCII, non-ASCII, every escaped character, and bytes that are not valid UTF-8.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_READ_MAX_BYTES, RANGED_READ_MIN_BYTES } from "../../../server/kernel/limits.js";
import { startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

/** Seeded lines: log lines, some with quotes, backslashes, control characters, DEL, U+2028/2029, non-ASCII. */
function seededLines(bytes: number, seed: number): string {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const oddities = ['"quoted"', "back\\slash", "\t", "\u007f", "\u2028", "\u2029", "é", "€", "😀", "\r"];
  const parts: string[] = [];
  let size = 0;
  for (let line = 1; size < bytes; line++) {
    let text = `${String(line).padStart(8, "0")} the quick brown fox jumps over the lazy dog`;
    if (random() < 0.3) text += oddities[Math.floor(random() * oddities.length)]!;
    // Any control character but NUL, which would make the file binary.
    if (random() < 0.05) text += String.fromCharCode(1 + Math.floor(random() * 0x1f));
    parts.push(`${text}\n`);
    size += Buffer.byteLength(parts[parts.length - 1]!);
  }
  return parts.join("");
}

interface Page {
  raw: Buffer;
  body: { ok: boolean; next?: string; files: Array<{ content: string }> };
}

async function page(target: string): Promise<Page> {
  const raw = Buffer.from(await (await fetch(target)).arrayBuffer());
  return { raw, body: JSON.parse(raw.toString("utf8")) as Page["body"] };
}

describe("/r pages as bytes", () => {
  let t: TestBridge;
  let s: AgentSession;
  const valid = Buffer.from(seededLines(2 * RANGED_READ_MIN_BYTES + 12_345, 3), "utf8");
  // Not UTF-8 in places: a lone 0xff mid-line, a Latin-1 é, a truncated sequence at a line's end.
  const invalid = Buffer.concat([
    valid.subarray(0, 300_001),
    Buffer.from([0xff]),
    valid.subarray(300_001, 900_000),
    Buffer.from([0xe9, 0x0a, 0xe2, 0x82, 0x0a]),
    valid.subarray(900_000),
  ]);
  const whole = Buffer.from(seededLines(600_000, 5), "utf8");

  beforeAll(async () => {
    t = await startTestBridge();
    fs.writeFileSync(path.join(t.projectDir, "valid.log"), valid);
    fs.writeFileSync(path.join(t.projectDir, "invalid.log"), invalid);
    fs.writeFileSync(path.join(t.projectDir, "whole.log"), whole);
    s = await t.session();
  });
  afterAll(async () => t.close());

  it.each([
    ["a large UTF-8 file", "valid.log", valid],
    ["a large file with bytes that are not UTF-8", "invalid.log", invalid],
    ["a file under the ranged-read size (read whole, then cut)", "whole.log", whole],
  ])(
    "reads %s through: every answer is the JSON text of its value, the pages join to the text",
    async (_, name, bytes) => {
      const max = MAX_READ_MAX_BYTES;
      let current = await page(
        url(s.r, "r", [
          ["path", name],
          ["max", max],
        ]),
      );
      const contents: string[] = [];
      for (;;) {
        expect(current.body.ok).toBe(true);
        expect(current.raw.equals(Buffer.from(JSON.stringify(current.body), "utf8"))).toBe(true);
        contents.push(current.body.files[0]!.content);
        if (current.body.next === undefined) break;
        current = await page(current.body.next);
      }
      expect(contents.length).toBeGreaterThan(bytes.length / max);
      expect(contents.join("")).toBe(bytes.toString("utf8"));
    },
  );
});
