import { describe, expect, it } from "vitest";
import { OutputCollector } from "../../../server/mutation/terminal/terminal-output.js";

const collect = (chunks: Array<string | Buffer>, headBytes: number, tailBytes: number) => {
  const c = new OutputCollector({ headBytes, tailBytes });
  for (const chunk of chunks) c.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return c.render();
};

describe("OutputCollector", () => {
  it("returns short output exactly, across chunk boundaries", () => {
    expect(collect(["héllo ", "wörld\n"], 8, 8)).toEqual({
      text: "héllo wörld\n",
      bytes: 14,
      truncated: false,
      omittedBytes: 0,
    });
  });

  it("keeps head and tail with a notice naming the omitted byte count", () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `line ${i}\n`).join("");
    const out = collect([lines], 20, 20);
    expect(out.truncated).toBe(true);
    expect(out.bytes).toBe(Buffer.byteLength(lines));
    expect(out.text.startsWith(lines.slice(0, 20))).toBe(true);
    expect(out.text.endsWith(lines.slice(-20))).toBe(true);
    expect(out.text).toContain(`${out.omittedBytes} bytes omitted`);
    expect(out.omittedBytes).toBe(Buffer.byteLength(lines) - 40);
  });

  it("keeps the tail bounded when fed many small chunks", () => {
    const c = new OutputCollector({ headBytes: 4, tailBytes: 4 });
    for (let i = 0; i < 10_000; i++) c.push(Buffer.from(String(i % 10)));
    const out = c.render();
    expect(out.text.startsWith("0123")).toBe(true);
    expect(out.text.endsWith("6789")).toBe(true);
    expect(out.bytes).toBe(10_000);
  });

  it.each([
    ["a cut inside a 2-byte character at the head", "aé" + "x".repeat(50) + "zz", 2, 2],
    ["a cut inside a 4-byte character at the head and tail", "a😀" + "x".repeat(50) + "😀", 3, 3],
    ["a cut inside a 3-byte character at the tail", "ab" + "x".repeat(50) + "€b", 2, 3],
  ])("never emits a broken character: %s", (_name, text, head, tail) => {
    const out = collect([text], head, tail);
    expect(out.truncated).toBe(true);
    expect(out.text).not.toContain("\uFFFD");
    expect(out.omittedBytes).toBeGreaterThan(0);
  });
});
