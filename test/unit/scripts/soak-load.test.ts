// The soak's options and checks (scripts/soak/): issue 34's mix is reads and journaled edits only, a typo in an
// option is refused before any load starts, and a change the bridge acknowledged but the disk does not hold counts
// as lost.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { mergeTallies, splitPlan } from "../../../scripts/soak/clients.js";
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

  it("defaults to no gap and one client process, and takes --gap-ms and --clients", () => {
    expect(parseSoakOptions([])).toMatchObject({ gapMs: 0, clients: 1 });
    expect(parseSoakOptions(["--gap-ms=20", "--clients=4", "--inflight=16"])).toMatchObject({
      gapMs: 20,
      clients: 4,
      inflight: 16,
    });
  });

  it.each([
    ["--mix=reads", /--mix must be one of full, read-write/],
    ["--gap-ms=-1", /--gap-ms must be an integer in 0\.\.1000/],
    ["--gap-ms=2.5", /--gap-ms must be an integer in 0\.\.1000/],
    ["--clients=9", /--clients must be an integer in 1\.\.8/],
    ["--duration=4", /--duration must be an integer in 5\.\.3600/],
    ["--sessions=17", /--sessions must be an integer in 1\.\.16/],
    ["--color=red", /unknown option --color/],
    ["mix", /unknown argument mix/],
  ])("refuses %s", (arg, message) => {
    expect(() => parseSoakOptions([arg])).toThrow(message);
  });
});

describe("the soak's client processes", () => {
  const sessions = Array.from({ length: 5 }, (_, index) => ({ index, root: `/p${index}`, r: "r", m: "m" }));
  const plan = { sessions, inflight: 7, seed: 1, mix: "read-write" as const, gapMs: 20, durationMs: 1000 };

  it("refuses more client processes than requests in flight", () => {
    expect(() => parseSoakOptions(["--clients=4", "--inflight=3"])).toThrow(/--clients=4 needs at least as many/);
  });

  it("shares every session to exactly one client and the requests in flight out evenly", () => {
    const shares = splitPlan(plan, 3);
    expect(shares.map((s) => s.sessions.map((x) => x.index))).toEqual([[0, 3], [1, 4], [2]]);
    expect(shares.map((s) => s.inflight)).toEqual([3, 2, 2]);
    expect(new Set(shares.map((s) => s.seed)).size).toBe(3);
    expect(shares.every((s) => s.gapMs === 20 && s.mix === "read-write")).toBe(true);
  });

  it("merges the clients' tallies into one", () => {
    const a: LoadTally = {
      records: [{ kind: "read", ms: 1 }],
      errors: new Map([["transport", 1]]),
      writesPolled: 1,
      doubleExecutions: 0,
      terminalIds: new Map([[0, ["t1"]]]),
      expected: new Map([["/p0/a", "x"]]),
    };
    const b: LoadTally = {
      records: [{ kind: "edit", ms: 2 }],
      errors: new Map([
        ["transport", 2],
        ["http_500", 1],
      ]),
      writesPolled: 2,
      doubleExecutions: 1,
      terminalIds: new Map([[1, ["t2"]]]),
      expected: new Map([["/p1/b", "y"]]),
    };
    const merged = mergeTallies([a, b]);
    expect(merged.records).toHaveLength(2);
    expect(Object.fromEntries(merged.errors)).toEqual({ transport: 3, http_500: 1 });
    expect([merged.writesPolled, merged.doubleExecutions]).toEqual([3, 1]);
    expect(merged.terminalIds.size).toBe(2);
    expect(merged.expected.size).toBe(2);
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
