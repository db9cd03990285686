import { describe, expect, it } from "vitest";
import { directoryBudget } from "../../../server/mutation/files/apply-patch/budget.js";
import { openFileLimit, parseOpenFileLimit } from "../../../server/sandbox/open-file-limit.js";

const limits = (soft: string, hard: string) =>
  [
    "Limit                     Soft Limit           Hard Limit           Units     ",
    "Max cpu time              unlimited            unlimited            seconds   ",
    `Max open files            ${soft.padEnd(20)} ${hard.padEnd(20)} files     `,
    "",
  ].join("\n");

describe("the open-file limit and the patch folder budget", () => {
  it("reads the soft limit from /proc/self/limits", () => {
    expect(parseOpenFileLimit(limits("1024", "524288"))).toBe(1024);
    expect(parseOpenFileLimit(limits("unlimited", "unlimited"))).toBeUndefined();
    expect(parseOpenFileLimit("")).toBeUndefined();
    expect(parseOpenFileLimit(undefined)).toBeUndefined();
    // This process's own, as the kernel reports it.
    expect(openFileLimit()).toBeGreaterThan(0);
  });

  it("gives one patch a quarter of the limit, 256 folders when it is unknown, and at least one", () => {
    expect(directoryBudget(524_288)).toBe(131_072);
    expect(directoryBudget(1024)).toBe(256);
    expect(directoryBudget(255)).toBe(63);
    expect(directoryBudget(3)).toBe(1);
    expect(directoryBudget(undefined)).toBe(256);
  });
});
