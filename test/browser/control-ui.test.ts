// The control UI end to end in Debian's Chromium: log in, add a project through the folder browser,
// create a session, hand its Init URL to an "agent" (this test), rotate, and watch the call in Activity.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATE_FILE_NAME } from "../../server/store/database.js";
import { giveToAgent, makeTempDir, startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge } from "../helpers/bridge.js";
import { launchChromium, recordConsoleProblems } from "../helpers/chromium.js";
import { ensureWebBuilt, REPO_ROOT } from "./build-web.js";

const ARTIFACTS = path.join(REPO_ROOT, "test-artifacts", "browser");
const DESKTOP = { width: 1280, height: 800 };
const NARROW = { width: 400, height: 820 };

describe("control UI in Chromium", () => {
  let t: TestBridge;
  let browser: Browser;
  let page: Page;
  let browseRoot: string;
  let projectRoot: string;
  const consoleProblems: string[] = [];

  const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
  const goto = async (title: string) => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: title }).click();
    await page.getByRole("heading", { level: 1, name: title }).waitFor();
  };
  const sessionCard = (name: string) => page.locator(`article[data-session="${name}"]`);

  beforeAll(async () => {
    await ensureWebBuilt();
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    browseRoot = makeTempDir("browse");
    projectRoot = path.join(browseRoot, "demo-app");
    fs.mkdirSync(path.join(projectRoot, "src"), { recursive: true });
    fs.mkdirSync(path.join(browseRoot, "other-folder"));
    fs.writeFileSync(path.join(projectRoot, "README.md"), "# demo\n");
    // Granting terminal needs a folder its commands' uid can write (root_not_writable otherwise, which
    // first-run.test.ts shows): the project belongs to that uid, as an operator's own folder does.
    fs.chmodSync(browseRoot, 0o755);
    giveToAgent(projectRoot);
    t = await startTestBridge({ URLBRIDGE_BROWSE_ROOTS: browseRoot });
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: DESKTOP });
    page = await context.newPage();
    recordConsoleProblems(page, consoleProblems);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("logs in with the operator token using only the keyboard", async () => {
    await page.goto(t.bridge.controlUrl);
    await page.getByRole("heading", { name: "urlbridge control plane" }).waitFor();
    await page.getByText("It is set by URLBRIDGE_OPERATOR_TOKEN").waitFor();
    await shot("01-login");
    await page.keyboard.type(TEST_OPERATOR_TOKEN); // the token field has focus on load
    await page.keyboard.press("Enter");
    await page.getByRole("navigation", { name: "Main" }).waitFor();
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === "urlbridge_session")).toMatchObject({ httpOnly: true, sameSite: "Strict" });
  });

  it("adds a project through the folder browser and shows its canonical root", async () => {
    await goto("Projects");
    await page.getByText("No projects yet").waitFor();
    await page.getByRole("button", { name: "Add project" }).first().click();
    const browserPanel = page.getByRole("region", { name: "Folder browser" });
    await browserPanel.locator(`button[data-path="${browseRoot}"]`).click();
    await browserPanel.getByRole("button", { name: "other-folder" }).waitFor();
    await browserPanel.getByRole("button", { name: "demo-app" }).click();
    await browserPanel.getByRole("button", { name: "src" }).waitFor();
    await shot("02-folder-browser");
    await browserPanel.getByRole("button", { name: "Use this folder" }).click();
    expect(await page.getByTestId("chosen-root").textContent()).toBe(projectRoot);
    expect(await page.getByLabel("Name").inputValue()).toBe("demo-app");
    await page.getByLabel("Allow file writes").check();
    await page.locator("form").getByRole("button", { name: "Add project" }).click();
    const card = page.locator('article[data-project="demo-app"]');
    await card.waitFor();
    expect(await card.getByTestId("project-root").textContent()).toBe(projectRoot);
    expect(await card.textContent()).toContain("write");
  });

  let firstInitUrl: string;

  it("creates a session whose Init URL and prompt work for an agent", async () => {
    await goto("Sessions");
    await page.getByLabel("Name (optional)").fill("agent-one");
    await page.getByRole("button", { name: "Create session" }).click();
    const card = sessionCard("agent-one");
    await card.waitFor();
    firstInitUrl = await card.getByTestId("init-url").inputValue();
    expect(firstInitUrl).toMatch(new RegExp(`^${t.bridge.dataUrl}/v0/init/[A-Za-z0-9]{8}$`));
    await card.getByText("Init prompt to paste").click();
    expect(await card.getByTestId("init-prompt").inputValue()).toContain(firstInitUrl);
    expect(await card.getByTestId("tools").textContent()).toMatch(/stat/);

    const init = (await (await fetch(firstInitUrl)).json()) as { bases: { r: string } };
    expect(init.bases.r).toMatch(/^http/);
    const stat = (await (await fetch(`${init.bases.r}/t?path=README.md`)).json()) as { ok: boolean };
    expect(stat.ok).toBe(true);
    await shot("03-sessions");
  });

  it("shows ready MCP client snippets beside the Init URL, the same text the CLI prints", async () => {
    const card = sessionCard("agent-one");
    await card.getByText("MCP clients: OpenCode").click();
    const opencode = JSON.parse(await card.getByTestId("mcp-opencode-remote").inputValue()) as {
      mcp: Record<string, { type: string; url: string; oauth: boolean; headers: { Authorization: string } }>;
    };
    const server = opencode.mcp["agent-one"]!;
    expect(server).toMatchObject({ type: "remote", url: `${t.bridge.dataUrl}/mcp`, oauth: false });
    expect(server.headers.Authorization).toMatch(/^Bearer [A-Za-z0-9]{8}$/);
    expect(await card.getByTestId("mcp-claude-code-local").inputValue()).toMatch(
      /^claude mcp add agent-one -- (docker compose exec -T bridge urlbridge|\/\S+ \/\S+\/bin\/urlbridge\.js) mcp (--state-dir \/\S+ --control-url http:\/\/\S+ )?--session agent-one$/,
    );
    const sessionId = await card.getAttribute("data-session-id");
    const view = await t.api<{ snippets: Array<{ id: string; text: string }> }>(
      "GET",
      `/api/sessions/${sessionId}/mcp`,
    );
    expect(view.body.snippets.find((s) => s.id === "opencode-remote")?.text).toBe(
      await card.getByTestId("mcp-opencode-remote").inputValue(),
    );
    await shot("03b-session-mcp");
  });

  it("shows the agent's call in Activity, live", async () => {
    await goto("Activity");
    const row = page.locator('[data-testid="activity-table"] tbody tr[data-tool="stat"]');
    await row.first().waitFor();
    const text = await row.first().textContent();
    expect(text).toContain("agent-one");
    expect(text).toContain("ok");
    expect(text).toContain("path=README.md");

    const before = await page.locator('[data-testid="activity-table"] tbody tr').count();
    const init = (await (await fetch(firstInitUrl)).json()) as { bases: { r: string } };
    await fetch(`${init.bases.r}/t?path=missing.txt`);
    await page
      .locator('[data-testid="activity-table"] tbody tr')
      .nth(before + 1)
      .waitFor();
    expect(await page.locator("tbody tr").first().textContent()).toContain("path=missing.txt");
    await shot("04-activity");
  });

  it("shows a banner while the state store cannot be written, and clears it once it can", async () => {
    // Another connection holds the write lock, as a backup tool would; the agent's call then cannot be logged.
    const holder = new Database(path.join(t.stateDir, STATE_FILE_NAME));
    holder.exec("BEGIN IMMEDIATE");
    const banner = page.getByTestId("store-degraded");
    try {
      const init = (await (await fetch(firstInitUrl)).json()) as { bases: { r: string } };
      expect(((await (await fetch(`${init.bases.r}/t?path=README.md`)).json()) as { ok: boolean }).ok).toBe(true);
      await banner.waitFor();
      const text = await banner.textContent();
      expect(text).toContain("SQLITE_BUSY");
      expect(text).toContain("Another process holds the state database's lock");
      expect(text).toContain("no restart is needed");
      await shot("04b-store-degraded");
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    await banner.waitFor({ state: "detached" });
  });

  it("rotates a session: the old Init URL answers 404, the new one works", async () => {
    await goto("Sessions");
    const card = sessionCard("agent-one");
    await card.getByRole("button", { name: "Rotate" }).click();
    const dialog = page.getByRole("dialog", { name: "Rotate agent-one?" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Rotate" }).click();
    await card.getByText("generation 2").waitFor();
    const newInitUrl = await card.getByTestId("init-url").inputValue();
    expect(newInitUrl).not.toBe(firstInitUrl);
    expect((await fetch(firstInitUrl)).status).toBe(404);
    expect((await fetch(newInitUrl)).status).toBe(200);
  });

  it("renames a session in place (Enter saves, Escape cancels) without touching its URLs", async () => {
    await goto("Sessions");
    const card = sessionCard("agent-one");
    const id = (await card.getAttribute("data-session-id"))!;
    const initUrl = await card.getByTestId("init-url").inputValue();
    const byId = page.locator(`article[data-session-id="${id}"]`);
    await card.getByRole("button", { name: "Rename" }).click();
    const field = byId.getByLabel("New name for agent-one");
    await field.fill("agent one (review)");
    await field.press("Enter");
    await byId.getByRole("heading", { name: "agent one (review)" }).waitFor();
    await page.getByText("Renamed agent-one to agent one (review); its URLs are unchanged.").waitFor();
    expect(await byId.getByTestId("init-url").inputValue()).toBe(initUrl);
    expect((await t.api<{ name: string }>("GET", `/api/sessions/${id}`)).body.name).toBe("agent one (review)");

    // An empty name is refused with the server's words, and Escape leaves the name as it was.
    await byId.getByRole("button", { name: "Rename" }).click();
    await byId.getByLabel("New name for agent one (review)").fill("   ");
    await byId.getByRole("button", { name: "Save" }).click();
    await byId.getByText("name: name is required").waitFor();
    await byId.getByLabel("New name for agent one (review)").press("Escape");
    await byId.getByRole("heading", { name: "agent one (review)" }).waitFor();

    await byId.getByRole("button", { name: "Rename" }).click();
    await byId.getByLabel("New name for agent one (review)").fill("agent-one");
    await byId.getByLabel("New name for agent one (review)").press("Enter");
    await sessionCard("agent-one").getByRole("heading", { name: "agent-one" }).waitFor();
    expect((await fetch(initUrl)).status).toBe(200);
  });

  it("says which sessions rotate before changing a project's permissions", async () => {
    await goto("Projects");
    const card = page.locator('article[data-project="demo-app"]');
    await card.getByRole("button", { name: "Edit" }).click();
    await card.getByLabel("Allow terminal commands").check();
    await card.getByRole("button", { name: "Save" }).click();
    const dialog = page.getByRole("dialog", { name: "Rotate 1 session?" });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("agent-one");
    await dialog.getByRole("button", { name: "Save and rotate 1 session" }).click();
    await page.getByText("rotated 1 session").waitFor();
    expect(await card.textContent()).toContain("terminal");
    const session = (await t.api<Array<{ generation: number }>>("GET", "/api/sessions")).body[0]!;
    expect(session.generation).toBe(3);
  });

  it("turns the web permission on from the project's edit form, rotating its session, and shows it", async () => {
    const card = page.locator('article[data-project="demo-app"]');
    expect(await card.locator(".badge").allTextContents()).toContain("no web");
    await card.getByRole("button", { name: "Edit" }).click();
    await card.getByLabel("Allow web fetch and search").check();
    await card.getByRole("button", { name: "Save" }).click();
    const dialog = page.getByRole("dialog", { name: "Rotate 1 session?" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Save and rotate 1 session" }).click();
    await page.getByText("rotated 1 session").waitFor();
    // The project list reloads after the save: wait for the card's new badge rather than read it mid-reload.
    await card.locator(".badge", { hasText: /^web$/ }).waitFor();
    expect(await card.locator(".badge").allTextContents()).toContain("web");
    const session = (
      await t.api<Array<{ generation: number; tools: string[]; initUrl: string }>>("GET", "/api/sessions")
    ).body[0]!;
    expect(session.generation).toBe(4);
    expect(session.tools).toEqual(expect.arrayContaining(["webfetch", "websearch"]));
    const init = (await (await fetch(session.initUrl)).json()) as { perms: Record<string, boolean> };
    expect(init.perms.web).toBe(true);
  });

  it("makes a new folder in the folder browser, owned by the agents, and adds it with terminal at once", async () => {
    await goto("Projects");
    await page.getByRole("button", { name: "Add project" }).first().click();
    const browserPanel = page.getByRole("region", { name: "Folder browser" });
    await browserPanel.locator(`button[data-path="${browseRoot}"]`).click();
    await browserPanel.getByRole("button", { name: "other-folder" }).waitFor();
    await browserPanel.getByLabel("New folder here").fill("made-here");
    await browserPanel.getByRole("button", { name: "Create folder" }).click();
    const made = path.join(browseRoot, "made-here");
    await browserPanel.getByText("No subfolders here.").waitFor();
    expect(fs.statSync(made).isDirectory()).toBe(true);
    if (process.getuid?.() === 0) expect(fs.statSync(made).uid).toBe(1000);
    await shot("02b-new-folder");
    await browserPanel.getByRole("button", { name: "Use this folder" }).click();
    expect(await page.getByTestId("chosen-root").textContent()).toBe(made);
    await page.getByLabel("Allow terminal commands").check();
    await page.locator("form").getByRole("button", { name: "Add project" }).click();
    await page.locator('article[data-project="made-here"]').waitFor();
  });

  it("states each sandbox check in words, enforced or not enforced, as /api/health reports it", async () => {
    await goto("Projects");
    const badges = page.locator('[data-test="sandbox"] .badge');
    await badges.first().waitFor();
    const health = await (await fetch(`${t.bridge.controlUrl}/api/health`)).json();
    const sandbox = (health as { sandbox: Record<string, unknown> }).sandbox;
    const shown = await badges.evaluateAll((els) =>
      els.map((el) => [el.getAttribute("data-check"), el.textContent?.trim(), el.className]),
    );
    expect(shown.length).toBe(6);
    for (const [check, text, className] of shown) {
      const enforced = sandbox[check!] === true;
      expect(text, check!).toMatch(enforced ? /: enforced$/ : /: not enforced$/);
      expect(className, check!).toContain(enforced ? "on" : "off");
    }
    // The case: the network is not restricted outside a container, and the badge says so in words.
    expect(sandbox.network).toBe(false);
    expect(shown.find(([check]) => check === "network")?.[1]).toBe("network restriction: not enforced");
  });

  it("saves and clears a manual public origin on the Tunnel page", async () => {
    await goto("Tunnel");
    expect(await page.getByTestId("origin-source").textContent()).toBe("local");
    await page.getByLabel("Public origin").fill("https://bridge.example.com");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved https://bridge.example.com").waitFor();
    expect(await page.getByTestId("origin-source").textContent()).toBe("setting");
    await shot("05-tunnel");
    await goto("Sessions");
    expect(await sessionCard("agent-one").getByTestId("init-url").inputValue()).toMatch(
      /^https:\/\/bridge\.example\.com\/v0\/init\//,
    );
    await goto("Tunnel");
    await page.getByRole("button", { name: "Clear" }).click();
    await page.getByText("Cleared the saved origin").waitFor();
    expect(await page.getByTestId("origin-source").textContent()).toBe("local");
  });

  it("shows the empty plugin list in words", async () => {
    await goto("Plugins");
    await page.getByText("No plugins installed").waitFor();
  });

  it("fits a narrow window without horizontal scrolling (and has a dark scheme)", async () => {
    await page.setViewportSize(NARROW);
    await goto("Sessions");
    await sessionCard("agent-one").waitFor();
    const overflow = await page.evaluate<number>(
      "document.documentElement.scrollWidth - document.documentElement.clientWidth",
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await shot("06-sessions-narrow");
    await page.setViewportSize(DESKTOP);
    await page.emulateMedia({ colorScheme: "dark" });
    await shot("07-sessions-dark");
    await page.emulateMedia({ colorScheme: "light" });
  });

  it("logs out, and the cookie no longer opens the API", async () => {
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByRole("heading", { name: "urlbridge control plane" }).waitFor();
    const status = await page.evaluate(async () => (await fetch("/api/projects")).status);
    expect(status).toBe(401);
  });

  it("logged no console errors or warnings on the way", () => {
    // The deliberate 401 above and the deliberate empty rename (400) are the only failed requests; Chromium
    // reports each as a console error.
    const unexpected = consoleProblems.filter((p) => !/status of 401/.test(p));
    expect(unexpected).toEqual([
      "error: Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ]);
  });
});
