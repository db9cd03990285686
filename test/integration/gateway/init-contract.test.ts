import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_INIT_CONTRACT_BYTES, TILDE_RULE } from "../../../server/gateway/init-contract.js";
import { MAX_READ_PATHS } from "../../../server/kernel/limits.js";
import { MAX_WAIT_MS } from "../../../server/mutation/journal/controls.js";
import { MAX_CHUNK_BYTES } from "../../../server/mutation/staging/staging.js";
import { STDERR_LIMITS, STDOUT_LIMITS } from "../../../server/mutation/terminal/terminal-output.js";
import { MAX_RAW_BYTES, MAX_REQUEST_TARGET_BYTES } from "../../../server/url-grammar/limits.js";
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

/** projectName in server/control/schemas.ts: at most 64 characters, all ASCII. */
const LONGEST_PROJECT_NAME = 64;

describe("Init contract", () => {
  it("advertises terminal but not write endpoints for a terminal-only project", async () => {
    const s = await t.session({ write: false, terminal: true });
    const init = (await (await fetch(s.initUrl)).json()) as {
      ep: Record<string, [string, string]>;
      bases: Record<string, string>;
    };
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
    // The worst case: every permission, plugin discovery, and the longest project name the control plane accepts.
    const s = await t.session({
      write: true,
      terminal: true,
      web: true,
      name: `p${"x".repeat(LONGEST_PROJECT_NAME - 1)}`,
    });
    const body = await (await fetch(s.initUrl)).text();
    expect(JSON.parse(body).project).toHaveLength(LONGEST_PROJECT_NAME);
    const bytes = Buffer.byteLength(body, "utf8");
    expect(bytes).toBeLessThanOrEqual(MAX_INIT_CONTRACT_BYTES);
    const init = JSON.parse(body) as { ep: Record<string, [string, string]>; bases: Record<string, string> };
    expect(Object.keys(init.ep)).toEqual([
      "read",
      "find",
      "grep",
      "outline",
      "stat",
      "project",
      "webfetch",
      "websearch",
      "write",
      "edit",
      "apply_patch",
      "terminal",
      "stage",
      "result",
      "plugins",
    ]);
    expect(init.ep.plugins).toEqual(["r", "/k"]);
    expect(Object.keys(init.bases)).toEqual(["r", "m"]);
    for (const [ref, suffix] of Object.values(init.ep)) {
      expect(init.bases[ref]).toBeDefined();
      expect(suffix.startsWith("/")).toBe(true);
    }
    console.info(
      `Init contract: ${bytes} bytes (limit ${MAX_INIT_CONTRACT_BYTES}), endpoints: ${Object.keys(init.ep).join(", ")}`,
    );
  });

  it("states the facts an agent needs before its second call, from the limits the bridge enforces", async () => {
    const s = await t.session({ write: true, terminal: true });
    const rules = ((await (await fetch(s.initUrl)).json()) as { rules: string[] }).rules.join("\n");
    expect(rules).toContain("/g: literal unless regex=1");
    expect(rules).toContain(`Up to ${MAX_READ_PATHS} path= per /r, each with its own lines=a-b; max=<bytes> per page`);
    expect(rules).toContain(`wait=<ms> (≤${MAX_WAIT_MS}) on mutations and /j`);
    expect(rules).toContain("/x bg=1 starts a server");
    expect(rules).toContain(
      `URL >${MAX_REQUEST_TARGET_BYTES / 1024} KiB or raw >${MAX_RAW_BYTES / 1024} KiB: stage ≤${MAX_CHUNK_BYTES / 1024} KiB chunks with /s`,
    );
    expect(rules).not.toMatch(/~1 KB|~1 KiB/);
    // Issue 27 item 8: the facts whose absence cost a round trip or a mistake in the field test.
    expect(rules).toContain(TILDE_RULE);
    expect(rules).toContain("+ is space but adds a notice; ~s none");
    expect(rules).toContain("/x runs as the project's user, own PATH");
    expect(rules).toContain(
      `${STDOUT_LIMITS.headBytes / 1024}+${STDOUT_LIMITS.tailBytes / 1024} KiB of stdout (head+tail), ${STDERR_LIMITS.headBytes / 1024}+${STDERR_LIMITS.tailBytes / 1024} KiB of stderr: add 2>&1`,
    );
    expect(rules).toContain(`Tests: wait=${MAX_WAIT_MS}&run=@changed`);
    for (const header of [
      "*** Add File: <p>",
      "*** Delete File: <p>",
      "*** Update File: <p>",
      "*** Move to: <q>",
      "@@",
      "*** End Patch",
    ])
      expect(rules).toContain(header);
    // No terminal, no bg=1; no mutation base, no mutation rules at all.
    const noTerminal = (
      (await (await fetch((await t.session({ write: true, terminal: false })).initUrl)).json()) as { rules: string[] }
    ).rules.join("\n");
    expect(noTerminal).toContain("wait=<ms>");
    expect(noTerminal).not.toContain("bg=1");
    expect(noTerminal).not.toContain("2>&1");
    expect(noTerminal).toContain("*** Update File: <p>");
    const readOnly = (
      (await (await fetch((await t.session({ write: false, terminal: false })).initUrl)).json()) as { rules: string[] }
    ).rules.join("\n");
    expect(readOnly).toContain("regex=1");
    expect(readOnly).not.toMatch(/wait=|stage|Begin Patch/);
    expect(readOnly).toContain(TILDE_RULE);
  });

  it("is model-neutral", async () => {
    const s = await t.session({ write: true, terminal: true });
    const body = await (await fetch(s.initUrl)).text();
    expect(body).not.toMatch(/\b(gpt|claude|gemini|openai|anthropic|llama|chatgpt)\b/i);
  });

  it("advertises no mutation base or mutation endpoint for a read-only project", async () => {
    const s = await t.session({ write: false, terminal: false });
    const init = (await (await fetch(s.initUrl)).json()) as {
      ep: Record<string, [string, string]>;
      bases: Record<string, string>;
    };
    expect(init.bases.m).toBeUndefined();
    for (const [ref] of Object.values(init.ep)) expect(ref).toBe("r");
    expect(Object.keys(init.ep)).toEqual(["read", "find", "grep", "outline", "stat", "project", "plugins"]);
    expect(init).toMatchObject({ perms: { write: false, terminal: false } });
  });

  it("makes every advertised endpoint callable as bases[ref] + suffix", async () => {
    const s = await t.session({ write: true, terminal: true });
    const init = (await (await fetch(s.initUrl)).json()) as {
      ep: Record<string, [string, string]>;
      bases: Record<string, string>;
    };
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
