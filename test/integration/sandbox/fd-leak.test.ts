// Every file tool holds descriptors while it works (the containment walk, directory walks, temp files): none
// may outlive its call, whether the call succeeds or is refused. Counted in this process, which runs the bridge.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { patchText, url, writeFiles } from "../mutation/fixtures.js";

const ROUNDS = 40;
/** Keep-alive sockets and the regex worker may come and go; a leak grows with the rounds instead. */
const SLACK = 6;

function openFds(): number {
  return fs.readdirSync("/proc/self/fd").length;
}

describe("file tools and descriptors", () => {
  let t: TestBridge;
  let s: AgentSession;

  beforeAll(async () => {
    t = await startTestBridge({ URLBRIDGE_GREP_ENGINE: "fallback" });
    const outside = makeTempDir("leak-outside");
    writeFiles(t.projectDir, {
      "src/app.ts": "export function app() {}\n",
      "src/deep/a/b/c.txt": "needle\n",
      ".gitignore": "ignored/\n",
      "src/.gitignore": "*.log\n",
      "package.json": JSON.stringify({ name: "leak", scripts: { test: "x" } }),
    });
    fs.symlinkSync(outside, path.join(t.projectDir, "out"));
    execFileSync("mkfifo", [path.join(t.projectDir, "fifo")]);
    s = await t.session({ write: true });
  });
  afterAll(async () => t.close());

  it(`closes every descriptor over ${ROUNDS} rounds of every tool, answered or refused`, async () => {
    const r = s.r;
    const m = s.m!;
    const round = async (i: number) => {
      const calls = [
        url(r, "r", [["path", "src/app.ts"]]),
        url(r, "r", [["path", "src"]]),
        url(r, "r", [["path", "out/x"]]),
        url(r, "r", [["path", "fifo"]]),
        url(r, "f", [["name", "c"]]),
        url(r, "f", [
          ["path", "src"],
          ["query", "needle"],
        ]),
        url(r, "g", [["path", "src/deep"]], "needle"),
        url(r, "g", [["path", "src/deep/a/b/c.txt"]], "needle"),
        url(r, "o", [["path", "src/app.ts"]]),
        url(r, "t", [["path", "out"]]),
        url(r, "t", [["path", "src/deep/a"]]),
        url(r, "p"),
        url(m, "w", [["path", `new/${i}/f.txt`]], `${i}\n`),
        url(m, "w", [["path", "out/escape.txt"]], "x"),
        url(
          m,
          "e",
          [
            ["path", "src/deep/a/b/c.txt"],
            ["old", "needle"],
            ["run", `e${i}`],
          ],
          "needle",
        ),
        url(m, "a", [], patchText(`*** Add File: added/${i}.txt`, "+x")),
        url(m, "a", [], patchText(`*** Update File: added/${i}.txt`, `*** Move to: moved/${i}.txt`)),
        url(m, "a", [], patchText(`*** Delete File: moved/${i}.txt`)),
        url(m, "a", [["run", `x${i}`]], patchText("*** Add File: out/x.txt", "+x")),
      ];
      for (const call of calls) {
        const body = await agentGet(call);
        expect(typeof body.ok, call).toBe("boolean");
      }
    };
    await round(-1);
    const before = openFds();
    for (let i = 0; i < ROUNDS; i++) await round(i);
    expect(openFds()).toBeLessThanOrEqual(before + SLACK);
  });
});
