// The permission class the kernel picks for the agent (agent-access.ts grants): owner bits for the owner even
// when group or other would allow more, else group bits for the file's group, else other bits.
import { describe, expect, it } from "vitest";
import { grants } from "../../../server/sandbox/agent-access.js";

const agent = { uid: 1000, gid: 1000 };
const WRITE = 2;
const WRITE_SEARCH = 3;

describe("grants", () => {
  it.each([
    ["the owner, 0644", { uid: 1000, gid: 5, mode: 0o100644 }, WRITE, true],
    ["the owner, 0444", { uid: 1000, gid: 1000, mode: 0o100444 }, WRITE, false],
    [
      "the owner, 0077: owner bits only, though group and other allow",
      { uid: 1000, gid: 1000, mode: 0o100077 },
      WRITE,
      false,
    ],
    ["another owner, the agent's group, 0664", { uid: 0, gid: 1000, mode: 0o100664 }, WRITE, true],
    ["another owner, the agent's group, 0646: group bits only", { uid: 0, gid: 1000, mode: 0o100646 }, WRITE, false],
    ["root's file, 0644", { uid: 0, gid: 0, mode: 0o100644 }, WRITE, false],
    ["root's file, 0666", { uid: 0, gid: 0, mode: 0o100666 }, WRITE, true],
    ["root's folder, 0755", { uid: 0, gid: 0, mode: 0o40755 }, WRITE_SEARCH, false],
    ["root's folder, 0777", { uid: 0, gid: 0, mode: 0o40777 }, WRITE_SEARCH, true],
    ["root's folder, 0772: write without search", { uid: 0, gid: 0, mode: 0o40772 }, WRITE_SEARCH, false],
    ["the agent's folder, 0555", { uid: 1000, gid: 1000, mode: 0o40555 }, WRITE_SEARCH, false],
    ["a sticky folder, 1777", { uid: 0, gid: 0, mode: 0o41777 }, WRITE_SEARCH, true],
  ])("%s", (_name, info, want, expected) => {
    expect(grants(agent, info, want)).toBe(expected);
  });
});
