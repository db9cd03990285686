// The Plugins page in Debian's Chromium with the bundled OpenCode Control plugin, in the three states an operator
// meets: nothing at the configured URL, a real `opencode serve` 1.18.33 that wants a password urlbridge lacks, and
// the same server with the password. Each bridge is real and in-process; the page shows what /api/plugins says.
import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenCodePlugin } from "../../plugins/opencode-control/index.js";
import { giveToAgent, makeTempDir, startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge } from "../helpers/bridge.js";
import { launchChromium, openControlPage } from "../helpers/chromium.js";
import { locateOpencode, OPENCODE_VERSION, startOpencodeServe, type OpencodeServe } from "../helpers/opencode-serve.js";
import { ensureWebBuilt, REPO_ROOT } from "./build-web.js";
import { takeDocScreenshot } from "./doc-screenshots.js";
import { closedPort } from "../helpers/closed-port.js";
import { listedToolNames } from "../helpers/mcp-clients.js";

const ARTIFACTS = path.join(REPO_ROOT, "test-artifacts", "browser");
const PASSWORD = "plugins-page-opencode-password-0123";
/** Status reads are probed at most this long by the plugin (1.5 s) and cached 5 s; a page answer is quicker than this. */
const PAGE_TIMEOUT_MS = 15_000;

const located = locateOpencode();
/** CI names the binary explicitly (.ci/run): there a missing OpenCode fails; elsewhere the suite skips, saying why. */
const required = Boolean(process.env.URLBRIDGE_OPENCODE_BIN);
if ("missing" in located && !required) process.stderr.write(`plugins-page.test.ts skipped: ${located.missing}\n`);

const bridgeWith = (url: string, password: string | undefined) =>
  startTestBridge(
    {},
    {
      plugins: [
        createOpenCodePlugin({
          url,
          username: "opencode",
          password,
          allowExisting: true,
          allowNested: false,
          maxWorkers: 8,
        }),
      ],
    },
  );

describe.skipIf("missing" in located && !required)("Plugins page with OpenCode Control", () => {
  let oc: OpencodeServe;
  let browser: Browser;
  const bridges: TestBridge[] = [];
  const consoleProblems: string[] = [];

  /** A fresh browser context per bridge (login cookies do not tell ports apart), logged in, on the Plugins page. */
  const openPlugins = (t: TestBridge): Promise<Page> =>
    openControlPage(browser, {
      controlUrl: t.bridge.controlUrl,
      token: TEST_OPERATOR_TOKEN,
      title: "Plugins",
      problems: consoleProblems,
      timeoutMs: PAGE_TIMEOUT_MS,
    });

  const row = (page: Page) => page.locator('tr[data-plugin="opencode-control"]');
  const text = async (page: Page, testId: string) => (await row(page).getByTestId(testId).textContent())?.trim();

  beforeAll(async () => {
    if ("missing" in located) throw new Error(located.missing);
    await ensureWebBuilt();
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const home = makeTempDir("plugins-page-opencode");
    // Status reads never reach the provider; the config still names one, as every OpenCode config does.
    oc = await startOpencodeServe({
      bin: located.bin,
      homeDir: home,
      cwd: home,
      providerBaseURL: "http://127.0.0.1:9/v1",
      password: PASSWORD,
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all(bridges.map((t) => t.close()));
    await oc?.stop();
  });

  it("says not running, with the URL, when nothing answers there", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const t = await bridgeWith(url, PASSWORD);
    bridges.push(t);
    const page = await openPlugins(t);
    await row(page).getByTestId("plugin-state").getByText("not running").waitFor();
    expect(await text(page, "plugin-tools")).toBe("4");
    expect(await text(page, "connection-url")).toBe(url);
    expect(await text(page, "connection-credentials")).toBe("password configured");
    expect(await text(page, "connection-auth")).toMatch(/^not known/);
    expect(await row(page).getByTestId("plugin-state").getAttribute("class")).toContain("fail");
    await page.screenshot({ path: path.join(ARTIFACTS, "plugins-not-running.png"), fullPage: true });
    await page.context().close();
  });

  it("says needs auth when the real server asks for a password urlbridge does not hold", async () => {
    const t = await bridgeWith(oc.url, undefined);
    bridges.push(t);
    const page = await openPlugins(t);
    await row(page).getByTestId("plugin-state").getByText("needs auth").waitFor();
    expect(await text(page, "connection-url")).toBe(oc.url);
    expect(await text(page, "connection-auth")).toBe("a password (HTTP Basic)");
    expect(await text(page, "connection-credentials")).toBe("no password configured");
    expect(await text(page, "plugin-detail")).toBeTruthy();
    await page.screenshot({ path: path.join(ARTIFACTS, "plugins-needs-auth.png"), fullPage: true });
    await page.context().close();
  });

  it("says ready with the server's version and pinned instance once the password is configured", async () => {
    const t = await bridgeWith(oc.url, PASSWORD);
    bridges.push(t);
    const page = await openPlugins(t);
    await row(page).getByTestId("plugin-state").getByText("ready").waitFor();
    expect(await row(page).getByTestId("plugin-state").getAttribute("class")).toContain("ok");
    expect(await text(page, "plugin-tools")).toBe("4");
    expect(await text(page, "connection-auth")).toBe("a password (HTTP Basic)");
    expect(await text(page, "connection-credentials")).toBe("password configured");
    expect(await text(page, "connection-version")).toBe(OPENCODE_VERSION);
    // The page shows what the API says, and never the password.
    const { body } = await t.api<Array<{ id: string; status: { connection?: { instance?: string } } }>>(
      "GET",
      "/api/plugins",
    );
    const instance = body.find((p) => p.id === "opencode-control")!.status.connection!.instance;
    expect(instance).toMatch(/^[0-9a-f]{12}$/);
    expect(await text(page, "connection-instance")).toBe(instance);
    expect(await page.content()).not.toContain(PASSWORD);
    await page.screenshot({ path: path.join(ARTIFACTS, "plugins-ready.png"), fullPage: true });
    // A narrow window scrolls the table, not the page.
    await page.setViewportSize({ width: 400, height: 820 });
    expect(
      await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth"),
    ).toBeLessThanOrEqual(0);
    await page.screenshot({ path: path.join(ARTIFACTS, "plugins-ready-narrow.png"), fullPage: true });
    await page.context().close();
  });

  it("logged no console errors or warnings", () => {
    expect(consoleProblems).toEqual([]);
  });
});

describe("Plugins page with OpenCode Control installed but not set up (the appliance's default)", () => {
  let browser: Browser;
  let t: TestBridge;
  const consoleProblems: string[] = [];

  beforeAll(async () => {
    await ensureWebBuilt();
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const settings = { url: "http://127.0.0.1:4096", username: "opencode", password: undefined };
    const rest = { allowExisting: true, allowNested: false, maxWorkers: 8, configured: false };
    t = await startTestBridge({}, { plugins: [createOpenCodePlugin({ ...settings, ...rest }, { inAppliance: true })] });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("says not configured, in grey, with the compose-profile advice in plain words, and offers agents neither it nor its tools", async () => {
    const page = await openControlPage(browser, {
      controlUrl: t.bridge.controlUrl,
      token: TEST_OPERATOR_TOKEN,
      title: "Plugins",
      problems: consoleProblems,
    });
    const row = page.locator('tr[data-plugin="opencode-control"]');
    const state = row.getByTestId("plugin-state");
    await state.getByText("not configured").waitFor();
    expect(await state.getAttribute("class")).toContain("idle");
    const detail = (await row.getByTestId("plugin-detail").textContent())!;
    expect(detail).toContain("docker compose --profile opencode up -d");
    expect(detail).toContain("URLBRIDGE_OPENCODE_PASSWORD");
    expect(detail).not.toContain("`");
    expect(await row.textContent()).not.toContain("`"); // the description's `opencode serve` is code
    expect((await row.getByTestId("plugin-tools").textContent())?.trim()).toBe("0");
    await takeDocScreenshot(page, "plugins-not-configured.png");

    // Neither the session card nor MCP offers a plugin tool that cannot run.
    giveToAgent(t.projectDir); // write is granted only where the agent's identity can write (issue 27)
    const project = await t.api<{ id: string }>("POST", "/api/projects", {
      name: "plain",
      root: t.projectDir,
      permissions: { write: true, terminal: false },
    });
    const session = await t.api<{ tools: string[]; mcpTools: string[]; initUrl: string }>("POST", "/api/sessions", {
      projectId: project.body.id,
    });
    const init = (await (await fetch(session.body.initUrl)).json()) as {
      bases: { r: string; m: string };
      ep: Record<string, unknown>;
    };
    // Nor do the Init contract and the URL edge's /k: the plugin is not there for an agent.
    expect(init.ep.plugins).toBeUndefined();
    expect(await (await fetch(`${init.bases.r}/k`)).json()).toEqual({ ok: true, plugins: [] });
    expect(await (await fetch(`${init.bases.r}/k?plugin=opencode-control`)).json()).toMatchObject({
      ok: false,
      errorCode: "unknown_plugin",
    });
    const token = new URL(init.bases.m).pathname.split("/")[2]!;
    const names = await listedToolNames(t.bridge.dataUrl, token);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => name.startsWith("opencode-control"))).toEqual([]);
    expect(session.body.tools.filter((id) => id.startsWith("opencode-control"))).toEqual([]);
    // The session's MCP count is what tools/list offers, name for name.
    expect([...session.body.mcpTools].sort()).toEqual([...names].sort());
    expect(consoleProblems).toEqual([]);
  });
});
