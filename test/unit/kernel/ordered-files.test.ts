import { describe, expect, it } from "vitest";
import {
  comparePaths,
  MatchCollector,
  OrderedFiles,
  type GrepLine,
  type SkipReason,
} from "../../../server/kernel/search/grep-collect.js";

type Input = { relative: string; lines: GrepLine[] } | { relative: string; skipped: SkipReason };

/** A small seeded generator (mulberry32), so a failure names the seed that shows it. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function inputs(next: () => number): Input[] {
  const names = ["a", "b", "B", "_", "a-b", "a.b", "ü", "z"];
  const seen = new Set<string>();
  const out: Input[] = [];
  for (let i = 0; i < 60; i++) {
    const depth = 1 + Math.floor(next() * 3);
    const relative =
      Array.from({ length: depth }, () => names[Math.floor(next() * names.length)]!).join("/") + `.${i % 5}`;
    if (seen.has(relative)) continue;
    seen.add(relative);
    if (next() < 0.1) out.push({ relative, skipped: "binary" });
    else
      out.push({
        relative,
        lines: Array.from({ length: 1 + Math.floor(next() * 12) }, (_, k) => ({
          line: k + 1,
          text: "x".repeat(Math.floor(next() * 300)),
        })),
      });
  }
  return out;
}

function feed(collector: MatchCollector, list: Input[]): void {
  for (const entry of list) {
    const more =
      "skipped" in entry
        ? collector.addSkipped(entry.relative, entry.skipped)
        : collector.addFile(entry.relative, entry.lines);
    if (!more) break;
  }
}

describe("OrderedFiles (files found in any order, answered in path order)", () => {
  it.each(Array.from({ length: 40 }, (_, seed) => [seed]))("answers as a sorted search would, seed %i", (seed) => {
    const next = random(seed);
    const list = inputs(next);
    const limits = { maxMatches: 1 + Math.floor(next() * 60), maxBytes: 2000 + Math.floor(next() * 20_000) };
    const sorted = new MatchCollector(limits);
    feed(
      sorted,
      [...list].sort((a, b) => comparePaths(a.relative, b.relative)),
    );
    const ordered = new OrderedFiles(limits);
    for (const entry of list) {
      if ("skipped" in entry) ordered.addSkipped(entry.relative, entry.skipped);
      else ordered.add(entry.relative, entry.lines);
    }
    const collector = new MatchCollector(limits);
    ordered.drainInto(collector);
    expect(collector.files).toEqual(sorted.files);
    expect(collector.skipped).toEqual(sorted.skipped);
    expect(collector.stop).toBe(sorted.stop);
    expect(collector.matchedLines).toBe(sorted.matchedLines);
  });

  it("orders paths component by component, names in byte order", () => {
    const paths = ["a.txt", "a/x.txt", "a-b.txt", "B.txt", "_u.txt", "ü.txt", "a/b/c", "a/b"];
    expect([...paths].sort(comparePaths)).toEqual([
      "B.txt",
      "_u.txt",
      "a/b",
      "a/b/c",
      "a/x.txt",
      "a-b.txt",
      "a.txt",
      "ü.txt",
    ]);
  });
});
