import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_RAW_BYTES, MAX_REQUEST_TARGET_BYTES } from "../../../server/url-grammar/limits.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

type Body = Record<string, unknown> & {
  ok: boolean;
  errorCode?: string;
  repairHint?: string;
  errorDetail?: { chunks: number; chunkBytes: number };
};

/** Python-ish source of about `bytes` bytes: lines, indentation, quotes and format strings, as real files have. */
function source(bytes: number): string {
  const lines: string[] = [];
  for (let i = 0; lines.join("\n").length < bytes; i++)
    lines.push(`    value_${i} = compute("item-${i}", limit=${i % 97})  # 100% of "%s" + ~${i}`);
  return `${lines.join("\n")}\n`;
}

/** Splits text into `count` pieces of nearly equal length, as an agent following the advice would. */
const split = (text: string, count: number) => {
  const size = Math.ceil(text.length / count);
  return Array.from({ length: count }, (_, i) => text.slice(i * size, (i + 1) * size));
};

describe("staging advice that fits the URL limit", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true });
  });
  afterAll(async () => t.close());

  it.each([
    ["a 20 KiB file (URL over the 12 KiB target limit)", 20 * 1024, "request_target_too_long", 3],
    ["an 8.2 KiB file (raw= over 8 KiB, URL under 12 KiB)", 8.2 * 1024, "raw_too_long", 2],
    ["a 40 KiB file", 40 * 1024, "request_target_too_long", 6],
  ])(
    "%s: the refusal names a chunk count that, followed as written, writes the file",
    async (_name, size, code, chunks) => {
      const content = source(size);
      const name = `big-${Math.round(size)}.py`;
      const refused = await agentGet<Body>(url(s.m!, "w", [["path", name]], content));
      expect(refused).toMatchObject({
        ok: false,
        errorCode: code,
        agentAction: "stage_content",
        errorDetail: { chunks },
      });
      expect(refused.repairHint).toContain(`Stage it in ${chunks} chunks`.slice(1));
      expect(refused.repairHint).toContain(`count=${chunks}`);
      expect(refused.repairHint).not.toMatch(/~1 KiB chunks/);
      let gets = 1;
      for (const [i, chunk] of split(content, chunks).entries()) {
        const stageUrl = url(
          s.m!,
          "s",
          [
            ["blob", name],
            ["i", i],
            ["count", chunks],
          ],
          chunk,
        );
        expect(Buffer.byteLength(new URL(stageUrl).pathname + new URL(stageUrl).search)).toBeLessThanOrEqual(
          MAX_REQUEST_TARGET_BYTES,
        );
        expect(Buffer.byteLength(chunk)).toBeLessThanOrEqual(MAX_RAW_BYTES);
        expect(await agentGet<Body>(stageUrl)).toMatchObject({ ok: true, index: i });
        gets++;
      }
      expect(
        await agentGet<Body>(
          url(s.m!, "w", [
            ["path", name],
            ["blob", name],
            ["count", chunks],
          ]),
        ),
      ).toMatchObject({ ok: true });
      gets++;
      expect(fs.readFileSync(path.join(t.projectDir, name), "utf8")).toBe(content);
      expect(gets).toBe(chunks + 2);
    },
  );

  it("says the real limits in /s's own description, not ~1 KiB", async () => {
    const manifest = await agentGet<{ tools: Array<{ id: string; description: string }> }>(`${s.m}/manifest`);
    const stage = manifest.tools.find((tool) => tool.id === "stage");
    expect(stage?.description).toContain(
      `up to ${MAX_RAW_BYTES / 1024} KiB, its URL up to ${MAX_REQUEST_TARGET_BYTES / 1024} KiB`,
    );
  });
});
