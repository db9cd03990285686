// Repairs that repair: routes and parameters spelled the way shells and other tools' APIs spell them answer
// with the exact canonical URL, and that URL, fetched exactly as returned, succeeds.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, giveToAgent, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

interface Body {
  ok: boolean;
  errorCode?: string;
  repair?: string;
  [key: string]: unknown;
}

describe("synonym repairs", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge();
    fs.writeFileSync(path.join(t.projectDir, "a.txt"), "alpha\nbeta\ngamma\ndelta\n");
    giveToAgent(t.projectDir);
    s = await t.session({ write: true, terminal: true });
  });
  afterAll(async () => t.close());

  const cases: Array<[string, () => string, string, (body: Body) => void]> = [
    ["/ls", () => `${s.r}/ls`, "unknown_route", (b) => expect(JSON.stringify(b)).toContain("a.txt")],
    ["/cat", () => `${s.r}/cat?path=a.txt`, "unknown_route", (b) => expect(JSON.stringify(b)).toContain("gamma")],
    [
      "/run on the read base",
      () => `${s.r}/run?raw=echo~srepaired`,
      "unknown_route",
      (b) => expect(b.stdout).toBe("repaired\n"),
    ],
    [
      "/exec on the read base",
      () => `${s.r}/exec?raw=echo~sexec`,
      "wrong_capability_base",
      (b) => expect(b.stdout).toBe("exec\n"),
    ],
    ["/rg", () => `${s.r}/rg?pattern=beta`, "unknown_route", (b) => expect(JSON.stringify(b)).toContain("beta")],
    [
      "filepath=",
      () => `${s.r}/r?filepath=a.txt`,
      "unknown_parameter",
      (b) => expect(JSON.stringify(b)).toContain("alpha"),
    ],
    [
      "file_path=",
      () => `${s.r}/r?file_path=a.txt`,
      "unknown_parameter",
      (b) => expect(JSON.stringify(b)).toContain("alpha"),
    ],
    // lines= is /r's own per-path range now (served directly, read.test.ts); line= is still a synonym.
    [
      "line=2-3",
      () => `${s.r}/r?path=a.txt&line=2-3`,
      "unknown_parameter",
      (b) => {
        const text = JSON.stringify(b);
        expect(text).toContain("beta");
        expect(text).toContain("gamma");
        expect(text).not.toContain("delta");
      },
    ],
    [
      "text= on /w",
      () => `${s.m}/w?path=new.txt&text=hello~sworld`,
      "unknown_parameter",
      () => {
        expect(fs.readFileSync(path.join(t.projectDir, "new.txt"), "utf8")).toBe("hello world");
      },
    ],
    [
      "text= on /g",
      () => `${s.r}/g?text=delta`,
      "unknown_parameter",
      (b) => expect(JSON.stringify(b)).toContain("delta"),
    ],
    // timeout is in ms; 2 meant seconds, and the old clamp to 100 ms killed the command.
    [
      "timeout=2 (seconds)",
      () => `${s.m}/x?timeout=2&raw=sleep~s0.3~s%26%26~secho~sslept`,
      "invalid_parameter",
      (b) => expect(b.stdout).toBe("slept\n"),
    ],
  ];

  it.each(cases)("%s: the repair URL, fetched as returned, succeeds", async (_name, url, code, check) => {
    const refused = await agentGet<Body>(url());
    expect(refused, JSON.stringify(refused)).toMatchObject({ ok: false, errorCode: code });
    expect(refused.repair).toBeTypeOf("string");
    const repaired = await agentGet<Body>(refused.repair!);
    expect(repaired, JSON.stringify(repaired)).toMatchObject({ ok: true });
    check(repaired);
  });
});
