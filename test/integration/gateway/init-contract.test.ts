import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_INIT_CONTRACT_BYTES } from "../../../server/gateway/init-contract.js";
import type { Plugin } from "../../../server/plugins/host.js";
import { startTestBridge, type TestBridge } from "../../helpers/bridge.js";

// A plugin with no tools: enough to switch on plugin discovery (/k) in Init.
const discoveryOnlyPlugin: Plugin = {
  id: "discovery-probe",
  title: "Discovery probe",
  description: "test only",
  tools: [],
  status: async () => ({ state: "ready" }),
};

describe("Init contract", () => {
  it("advertises terminal but not write endpoints for a terminal-only project", async () => {
    const s = await t.session({ write: false, terminal: true });
    const init = (await (await fetch(s.initUrl)).json()) as { ep: Record<string, [string, string]>; bases: Record<string, string> };
    expect(init.bases.m).toBeDefined();
    expect(init.ep.terminal).toEqual(["m", "/x?wait=1000&raw=<cmd>"]);
    for (const id of ["write", "edit", "apply_patch"]) expect(init.ep[id]).toBeUndefined();
  });

  let t: TestBridge;
  beforeAll(async () => {
    t = await startTestBridge({}, { plugins: [discoveryOnlyPlugin] });
  });
  afterAll(async () => t.close());

  it(`stays within ${MAX_INIT_CONTRACT_BYTES} bytes with every mutation tool, the web tools and plugin discovery enabled`, async () => {
    const s = await t.session({ write: true, terminal: true, web: true });
    const body = await (await fetch(s.initUrl)).text();
    const bytes = Buffer.byteLength(body, "utf8");
    expect(bytes).toBeLessThanOrEqual(MAX_INIT_CONTRACT_BYTES);
    const init = JSON.parse(body) as { ep: Record<string, [string, string]>; bases: Record<string, string> };
    expect(Object.keys(init.ep)).toEqual([
      "read", "find", "grep", "outline", "stat", "project", "webfetch", "websearch",
      "write", "edit", "apply_patch", "terminal", "stage", "result", "plugins",
    ]);
    expect(init.ep.plugins).toEqual(["r", "/k"]);
    expect(Object.keys(init.bases)).toEqual(["r", "m"]);
    for (const [ref, suffix] of Object.values(init.ep)) {
      expect(init.bases[ref]).toBeDefined();
      expect(suffix.startsWith("/")).toBe(true);
    }
    console.info(`Init contract: ${bytes} bytes (limit ${MAX_INIT_CONTRACT_BYTES}), endpoints: ${Object.keys(init.ep).join(", ")}`);
  });

  it("is model-neutral", async () => {
    const s = await t.session({ write: true, terminal: true });
    const body = await (await fetch(s.initUrl)).text();
    expect(body).not.toMatch(/\b(gpt|claude|gemini|openai|anthropic|llama|chatgpt)\b/i);
  });

  it("advertises no mutation base or mutation endpoint for a read-only project", async () => {
    const s = await t.session({ write: false, terminal: false });
    const init = (await (await fetch(s.initUrl)).json()) as { ep: Record<string, [string, string]>; bases: Record<string, string> };
    expect(init.bases.m).toBeUndefined();
    for (const [ref] of Object.values(init.ep)) expect(ref).toBe("r");
    expect(Object.keys(init.ep)).toEqual(["read", "find", "grep", "outline", "stat", "project", "plugins"]);
    expect(init).toMatchObject({ perms: { write: false, terminal: false } });
  });

  it("makes every advertised endpoint callable as bases[ref] + suffix", async () => {
    const s = await t.session({ write: true, terminal: true });
    const init = (await (await fetch(s.initUrl)).json()) as { ep: Record<string, [string, string]>; bases: Record<string, string> };
    for (const [id, [ref, suffix]] of Object.entries(init.ep)) {
      const url = init.bases[ref] + suffix.replace(/<[^>]+>/g, "x");
      const res = await fetch(url);
      expect(res.status, `${id} at ${url}`).toBe(200);
      const body = (await res.json()) as { ok: boolean; errorCode?: string };
      // Placeholders filled with "x" may fail validation, but never as an unknown route or wrong base.
      expect(["unknown_route", "wrong_capability_base", "unknown_parameter"]).not.toContain(body.errorCode);
    }
  });
});
