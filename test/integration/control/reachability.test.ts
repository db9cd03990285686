// Honest reachability wherever an Init URL is handed out: the session view (UI, CLI) and the Tunnel view say
// who can reach it while the origin is local, and say nothing once a public origin is set.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dataPlaneLine } from "../../../server/listeners.js";
import { loadConfig } from "../../../server/config.js";
import { startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge } from "../../helpers/bridge.js";
import { runCli } from "../cli/run-cli.js";

interface View {
  initUrl: string;
  reachability: { reach: string; warning: string | null };
}

describe("Init URL reachability", () => {
  let t: TestBridge;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await startTestBridge();
    env = {
      URLBRIDGE_STATE_DIR: t.stateDir,
      URLBRIDGE_CONTROL_PORT: new URL(t.bridge.controlUrl).port,
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    };
    await t.session({ name: "demo" });
  });
  afterAll(async () => t?.close());

  it("warns in the API, the Tunnel view and `urlbridge session create` while the origin is local", async () => {
    const [session] = (await t.api<View[]>("GET", "/api/sessions")).body;
    expect(session!.initUrl.startsWith(t.bridge.dataUrl)).toBe(true);
    expect(session!.reachability.reach).toBe("this_machine");
    expect(session!.reachability.warning).toMatch(/^Only programs on the bridge's own machine can reach this Init URL/);
    const tunnel = (await t.api<{ source: string; reachability: View["reachability"] }>("GET", "/api/tunnel")).body;
    expect(tunnel).toMatchObject({ source: "local", reachability: session!.reachability });

    const created = await runCli(["session", "create", "demo"], env);
    expect(created.code).toBe(0);
    const lines = created.stdout.split("\n");
    const warning = lines.findIndex((l) => l.startsWith("Warning: Only programs on the bridge's own machine"));
    expect(warning).toBeGreaterThan(-1);
    expect(warning).toBeLessThan(lines.indexOf("Init URL:"));
    expect((await runCli(["session", "list"], env)).stdout).toContain("Warning: Only programs");
    const json = JSON.parse((await runCli(["session", "create", "demo", "--json"], env)).stdout) as View;
    expect(json.reachability.reach).toBe("this_machine");
  });

  it("says nothing once a public origin is set", async () => {
    expect((await t.api("PUT", "/api/tunnel", { publicOrigin: "https://bridge.example.com" })).status).toBe(200);
    const sessions = (await t.api<View[]>("GET", "/api/sessions")).body;
    for (const s of sessions) expect(s.reachability).toEqual({ reach: "public", warning: null, noTunnelMode: false });
    const created = await runCli(["session", "create", "demo"], env);
    expect(created.stdout).not.toContain("Warning:");
    expect(created.stdout).toContain("https://bridge.example.com/v0/init/");
    await t.api("PUT", "/api/tunnel", { publicOrigin: null });
  });

  it.each([
    [
      { inAppliance: false, dataPlaneOnHost: false },
      /^data plane on http:\/\/127\.0\.0\.1:47432 \(agent routes; reachable from this machine only/,
    ],
    [
      { inAppliance: true, dataPlaneOnHost: false },
      /inside the container \(agent routes\); agents reach it only through the tunnel: until it connects, Init URLs use http:\/\/127\.0\.0\.1:47432, which nobody outside this container can reach$/,
    ],
    [{ inAppliance: true, dataPlaneOnHost: true }, /also published on the host at http:\/\/127\.0\.0\.1:47432/],
  ])("logs the data plane honestly at start-up (%o)", (context, expected) => {
    const config = loadConfig({ URLBRIDGE_STATE_DIR: "/tmp/unused", URLBRIDGE_DATA_HOST: "0.0.0.0" });
    expect(dataPlaneLine("http://127.0.0.1:47432", config, context)).toMatch(expected);
  });
});
