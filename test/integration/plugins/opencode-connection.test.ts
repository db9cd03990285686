// The OpenCode Control plugin's connection to a real `opencode serve` 1.18.33: lazy (starting urlbridge opens no
// connection), status before OpenCode is up and after, needs-auth without or with a wrong password, and a swap of
// the process behind the port refused for good (instance-changed). Skips without the binary, fails in CI.
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenCodePlugin } from "../../../plugins/opencode-control/index.js";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { startMockProvider, type MockProvider } from "../../helpers/mock-provider.js";
import { locateOpencode, startOpencodeServe, type OpencodeServe } from "../../helpers/opencode-serve.js";
import { url } from "../mutation/fixtures.js";

const located = locateOpencode();
const required = Boolean(process.env.URLBRIDGE_OPENCODE_BIN);
if ("missing" in located && !required)
  process.stderr.write(`opencode-connection.test.ts skipped: ${located.missing}\n`);

const PASSWORD = "urlbridge-it-opencode-connection-0123";
type Body = Record<string, unknown> & { ok: boolean; errorCode?: string };
type Status = Body & {
  state: string;
  detail: string;
  connection: { url: string; auth?: string; credentials: string; version?: string; instance?: string };
};

const k = (base: string, tool: string, args: unknown) =>
  url(
    base,
    "k",
    [
      ["plugin", "opencode-control"],
      ["tool", tool],
    ],
    JSON.stringify(args),
  );

/** A loopback TCP server that counts the connections it receives: proof that nothing connected. */
async function countingServer(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe.skipIf("missing" in located && !required)("OpenCode Control's connection to a real opencode serve", () => {
  let provider: MockProvider;
  let t: TestBridge;
  let s: AgentSession;
  let port: number;
  let oc: OpencodeServe | undefined;
  const settings = (password: string | undefined) => ({
    url: `http://127.0.0.1:${port}`,
    username: "opencode",
    password,
    allowExisting: true,
    allowNested: false,
    maxWorkers: 8,
  });

  beforeAll(async () => {
    if ("missing" in located) throw new Error(located.missing);
    provider = await startMockProvider();
    const probe = await countingServer();
    port = probe.port;
    // Starting the bridge with the plugin installed and a session made connects to nothing.
    t = await startTestBridge({}, { plugins: [createOpenCodePlugin(settings(PASSWORD))] });
    s = await t.session({ write: true, terminal: true });
    expect(probe.connections()).toBe(0);
    await probe.close();
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await oc?.stop();
    await provider?.close();
  });

  it("reports not-running while nothing listens, and a tool call says so retryably", async () => {
    const status = await agentGet<Status>(k(s.r, "opencode_info", { action: "status" }));
    expect(status).toMatchObject({
      ok: true,
      state: "not-running",
      connection: { url: `http://127.0.0.1:${port}`, credentials: "configured" },
    });
    expect(await agentGet(k(s.r, "opencode_worker", { action: "list" }))).toMatchObject({
      ok: false,
      errorCode: "opencode_unavailable",
      retryable: true,
    });
  });

  it("reports ready once OpenCode is up, with its version, auth and pinned instance, in /k and the control plane", async () => {
    oc = await startOpencodeServe({
      bin: (located as { bin: string }).bin,
      homeDir: makeTempDir("oc-home-a"),
      cwd: t.projectDir,
      providerBaseURL: provider.baseURL,
      password: PASSWORD,
      port,
    });
    const status = await agentGet<Status>(k(s.r, "opencode_info", { action: "status" }));
    expect(status).toMatchObject({
      ok: true,
      state: "ready",
      connection: { auth: "basic", credentials: "configured", version: "1.18.33" },
    });
    expect(status.connection.instance).toMatch(/^[0-9a-f]{12}$/);
    expect(await agentGet(k(s.r, "opencode_worker", { action: "list" }))).toMatchObject({ ok: true, workers: [] });
    const { body } = await t.api<Array<{ id: string; toolCount: number; status: Status }>>("GET", "/api/plugins");
    expect(body).toEqual([
      expect.objectContaining({
        id: "opencode-control",
        toolCount: 4,
        status: expect.objectContaining({
          state: "ready",
          connection: expect.objectContaining({ instance: status.connection.instance }),
        }),
      }),
    ]);
    // The password never appears in what the agent or the operator reads.
    expect(JSON.stringify(status) + JSON.stringify(body)).not.toContain(PASSWORD);
  });

  it("reports needs-auth without a password, and when OpenCode refuses the one given", async () => {
    const missing = await createOpenCodePlugin(settings(undefined)).status();
    expect(missing).toMatchObject({ state: "needs-auth", connection: { auth: "basic", credentials: "missing" } });
    expect(missing.detail).toContain("URLBRIDGE_OPENCODE_PASSWORD is not set");
    const wrong = await createOpenCodePlugin(settings("not-the-password-0123456789")).status();
    expect(wrong).toMatchObject({ state: "needs-auth" });
    expect(wrong.detail).toContain("refused");
  });

  it("fails closed, for good, when another OpenCode process answers behind the pinned port", async () => {
    await oc!.stop();
    oc = await startOpencodeServe({
      bin: (located as { bin: string }).bin,
      homeDir: makeTempDir("oc-home-b"),
      cwd: t.projectDir,
      providerBaseURL: provider.baseURL,
      password: PASSWORD,
      port,
    });
    expect(await agentGet(k(s.r, "opencode_worker", { action: "list" }))).toMatchObject({
      ok: false,
      errorCode: "opencode_instance_changed",
      retryable: false,
    });
    expect(await agentGet(k(s.m!, "opencode_worker", { action: "start", prompt: "must not run" }))).toMatchObject({
      ok: false,
      errorCode: "opencode_instance_changed",
    });
    expect(provider.requestsFor("must not run")).toHaveLength(0);
    const status = await agentGet<Status>(k(s.r, "opencode_info", { action: "status" }));
    expect(status).toMatchObject({ ok: true, state: "instance-changed" });
    // Still refused later: the pin does not quietly move to the new process.
    expect(await agentGet(k(s.r, "opencode_session", { action: "list" }))).toMatchObject({
      ok: false,
      errorCode: "opencode_instance_changed",
    });
  });
});
