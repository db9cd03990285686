// The soak's options and checks (scripts/soak/): issue 34's mix is reads and journaled edits only, a typo in an
// option is refused before any load starts, and a change the bridge acknowledged but the disk does not hold counts
// as lost.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { lostChanges, MIXES, type LoadTally } from "../../../scripts/soak/load.js";
import { parseSoakOptions } from "../../../scripts/soak/options.js";
import { makeTempDir } from "../../helpers/bridge.js";

describe("the soak's mixes", () => {
  it.each(Object.entries(MIXES))("%s weighs its operations out of 100", (_name, weights) => {
    expect(weights.reduce((sum, [, weight]) => sum + weight, 0)).toBe(100);
  });

  it("read-write holds reads and journaled writes and edits (with their retries) only", () => {
    expect(new Set(MIXES["read-write"].map(([kind]) => kind))).toEqual(
      new Set(["read", "write", "edit", "write-replay", "edit-replay"]),
    );
  });
});

describe("parseSoakOptions", () => {
  it("defaults to the full mix and takes --mix=read-write", () => {
    expect(parseSoakOptions([]).mix).toBe("full");
    expect(parseSoakOptions(["--mix=read-write", "--duration=60"])).toMatchObject({ mix: "read-write", durationS: 60 });
  });

  it.each([
    ["--mix=reads", /--mix must be one of full, read-write/],
    ["--duration=4", /--duration must be an integer in 5\.\.3600/],
    ["--sessions=17", /--sessions must be an integer in 1\.\.16/],
    ["--color=red", /unknown option --color/],
    ["mix", /unknown argument mix/],
  ])("refuses %s", (arg, message) => {
    expect(() => parseSoakOptions([arg])).toThrow(message);
  });
});

describe("lostChanges", () => {
  const tallyOf = (expected: Map<string, string>): LoadTally => ({
    records: [],
    errors: new Map(),
    writesPolled: 0,
    doubleExecutions: 0,
    terminalIds: new Map(),
    expected,
  });

  it("counts a file that is missing or holds other content than its last acknowledged change", () => {
    const root = makeTempDir("soak-lost");
    fs.writeFileSync(path.join(root, "kept.txt"), "edit 1\n");
    fs.writeFileSync(path.join(root, "reverted.txt"), "write 2\n");
    const expected = new Map([
      [path.join(root, "kept.txt"), "edit 1\n"],
      [path.join(root, "reverted.txt"), "edit 2\n"],
      [path.join(root, "missing.txt"), "write 3\n"],
    ]);
    expect(lostChanges(tallyOf(expected))).toEqual({ checked: 3, lost: 2 });
  });
});
