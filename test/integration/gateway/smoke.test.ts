import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type TestBridge } from "../../helpers/bridge.js";
import fs from "node:fs";
import path from "node:path";

describe("smoke", () => {
  let t: TestBridge;
  beforeAll(async () => {
    t = await startTestBridge();
  });
  afterAll(async () => t.close());

  it("serves init and stat", async () => {
    fs.writeFileSync(path.join(t.projectDir, "a.txt"), "hello");
    const s = await t.session({ write: true, terminal: true });
    console.log(JSON.stringify(s.init), Buffer.byteLength(JSON.stringify(s.init)));
    const r = await agentGet(`${s.r}/t?path=a.txt`);
    console.log(r);
    expect(r.ok).toBe(true);
    console.log(await agentGet(`${s.r}/t?pth=a.txt`));
    console.log(await agentGet(`${s.m}/t?path=a.txt`));
    console.log(await agentGet(`${s.r}/s?path=a.txt`));
    console.log(await agentGet(`${s.r}/t?path=../etc/passwd`));
    console.log(await agentGet(`${s.r}/zz`));
    const res = await fetch(`${t.bridge.dataUrl}/v0/AAAAAAAA/t`);
    console.log(res.status, await res.text());
  });
});
