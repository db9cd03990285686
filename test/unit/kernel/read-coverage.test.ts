import { describe, expect, it } from "vitest";
import { ReadCoverage, readCoverage } from "../../../server/kernel/read/read-coverage.js";
import { sessionSlot, SessionStates } from "../../../server/kernel/tool/session-state.js";

const FILE = "/host/project/a.txt";

describe("ReadCoverage", () => {
  it.each([
    ["one whole read", 100, [[0, 100]], true, []],
    [
      "the same whole read twice",
      100,
      [
        [0, 100],
        [0, 100],
      ],
      true,
      [],
    ],
    [
      "a page already seen, read again",
      100,
      [
        [0, 100],
        [20, 40],
      ],
      true,
      [],
    ],
    [
      "two pages that meet",
      100,
      [
        [0, 50],
        [50, 100],
      ],
      true,
      [],
    ],
    [
      "pages out of order",
      100,
      [
        [60, 100],
        [0, 30],
        [30, 60],
      ],
      true,
      [],
    ],
    [
      "overlapping pages",
      100,
      [
        [0, 70],
        [40, 100],
      ],
      true,
      [],
    ],
    [
      "a gap between pages",
      100,
      [
        [0, 30],
        [60, 100],
      ],
      false,
      [[30, 60]],
    ],
    [
      "a page that widens an earlier one",
      100,
      [
        [10, 20],
        [0, 50],
      ],
      false,
      [[50, 100]],
    ],
    ["a range past the end, clipped to the size", 100, [[0, 500]], true, []],
    ["an empty range", 100, [[40, 40]], false, [[0, 100]]],
  ] as Array<[string, number, Array<[number, number]>, boolean, Array<[number, number]>]>)(
    "%s",
    (_name, size, reads, complete, missing) => {
      const coverage = new ReadCoverage();
      for (const [start, end] of reads) coverage.record(FILE, "fp1", size, start, end);
      expect(coverage.isComplete(FILE, "fp1")).toBe(complete);
      expect(coverage.missing(FILE, "fp1", size)).toEqual(missing);
    },
  );

  it("forgets earlier pages when the content changes", () => {
    const coverage = new ReadCoverage();
    coverage.record(FILE, "old", 100, 0, 50);
    coverage.record(FILE, "new", 100, 50, 100);
    expect(coverage.missing(FILE, "new", 100)).toEqual([[0, 50]]);
    expect(coverage.isComplete(FILE, "old")).toBe(false);
  });

  it("counts an empty file as complete once read, and nothing after invalidate", () => {
    const coverage = new ReadCoverage();
    coverage.record(FILE, "empty", 0, 0, 0);
    expect(coverage.isComplete(FILE, "empty")).toBe(true);
    coverage.invalidate(FILE);
    expect(coverage.isComplete(FILE, "empty")).toBe(false);
  });
});

describe("SessionStates", () => {
  it("keeps one state per session generation and drops it on rotation or forget", () => {
    const states = new SessionStates();
    const first = states.get("s1", 1);
    expect(states.get("s1", 1)).toBe(first);
    expect(states.get("s2", 1)).not.toBe(first);
    const rotated = states.get("s1", 2);
    expect(rotated).not.toBe(first);
    expect(states.get("s1", 2)).toBe(rotated);
    states.forget("s1");
    expect(states.get("s1", 2)).not.toBe(rotated);
  });
});

describe("sessionSlot", () => {
  it("gives each session generation its own value, created once, and keeps slots apart", () => {
    const states = new SessionStates();
    let created = 0;
    const streak = sessionSlot(() => {
      created++;
      return [] as number[];
    });
    const first = states.get("s1", 1);
    streak.of(first).push(1);
    expect(streak.of(first)).toEqual([1]);
    expect(created).toBe(1);
    expect(streak.of(states.get("s2", 1))).toEqual([]);
    expect(streak.of(states.get("s1", 2))).toEqual([]);
    expect(readCoverage.of(first)).toBeInstanceOf(ReadCoverage);
    expect(readCoverage.of(first)).toBe(readCoverage.of(first));
    expect(readCoverage.of(first)).not.toBe(streak.of(first));
  });
});
