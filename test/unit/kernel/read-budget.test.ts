import { describe, expect, it } from "vitest";
import { allocateFairShares, shareBudget } from "../../../server/kernel/read/read-budget.js";

describe("allocateFairShares (max-min fairness)", () => {
  it.each([
    ["everything fits", [100, 200, 300], 1000, [100, 200, 300]],
    ["a big first file cannot starve the others", [100_000, 500, 700], 24_000, [22_800, 500, 700]],
    ["equal demands split evenly", [10_000, 10_000, 10_000, 10_000], 8_000, [2_000, 2_000, 2_000, 2_000]],
    ["small files are served whole and their leftovers flow on", [50, 9_000, 9_000], 10_000, [50, 4_975, 4_975]],
    ["zero budget gives nothing", [10, 20], 0, [0, 0]],
    ["empty files take nothing", [0, 0, 30_000], 24_000, [0, 0, 24_000]],
    ["one file gets the whole budget up to its demand", [40_000], 24_576, [24_576]],
  ])("%s", (_name, demands, budget, expected) => {
    const got = allocateFairShares(demands, budget);
    expect(got).toEqual(expected);
    expect(got.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(budget);
  });

  it("hands what an item leaves unused to the larger items after it", () => {
    // The middle item stops on a line boundary and uses only 1,000 of the 3,333 offered.
    const used: number[] = [];
    shareBudget([5_000, 4_000, 6_000], 10_000, (index, allowance) => {
      used[index] = index === 1 ? Math.min(1_000, allowance) : Math.min(allowance, [5_000, 4_000, 6_000][index]!);
      return used[index]!;
    });
    expect(used).toEqual([4_500, 1_000, 4_500]);
  });
});
