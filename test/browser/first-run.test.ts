// The first run as a newcomer meets it, in Debian's Chromium, on a fresh state with a generated token: log in
// with the command the login page shows (run for real), add a project from the folder browser, meet the
// writability refusal on a root-owned folder and its fix, create a session whose Init URL carries the
// reachability warning while the origin is local, and see the warning go once a public origin is set.
// It also takes the screenshots docs/ shows: into test-artifacts/ on every run, and into docs/screenshots/ only
// when asked (UPDATE_SCREENSHOTS=1), so running the tests leaves the checkout clean (issue 32).
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, startTestBridge, TEST_AGENT_UID, type TestBridge } from "../helpers/bridge.js";
import { launchChromium, recordConsoleProblems } from "../helpers/chromium.js";
import { ensureWebBuilt, REPO_ROOT } from "./build-web.js";

const run = promisify(execFile);
const DOC_SHOTS = path.join(REPO_ROOT, "docs", "screenshots");
/** Where this run writes them: docs/screenshots/ on purpose only, a git-ignored folder otherwise. */
const SHOTS_OUT =
  process.env.UPDATE_SCREENSHOTS === "1" ? DOC_SHOTS : path.join(REPO_ROOT, "test-artifacts", "docs-screenshots");
/** Every screenshot docs/ may show; this suite takes each one on every run, but control-changes.png (changes-view.test.ts). */
export const DOC_SCREENSHOTS = [
  "login.png",
  "add-project-unwritable.png",
  "control-sessions-local.png",
  "control-sessions.png",
  "control-changes.png",
] as const;
const asRoot = process.getuid?.() === 0;

describe.skipIf(!asRoot)("first run in Chromium (fresh state, generated token)", () => {
  let t: TestBridge;
  let browser: Browser;
  let page: Page;
  let browseRoot: string;
  const consoleProblems: string[] = [];

  const docShot = (name: (typeof DOC_SCREENSHOTS)[number]) =>
    page.screenshot({ path: path.join(SHOTS_OUT, name), fullPage: true });
  const goto = async (title: string) => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: title }).click();
    await page.getByRole("heading", { level: 1, name: title }).waitFor();
  };

  beforeAll(async () => {
    await ensureWebBuilt();
    fs.mkdirSync(SHOTS_OUT, { recursive: true });
    browseRoot = makeTempDir("first-run");
    fs.chmodSync(browseRoot, 0o755); // like the folder holding compose.yaml: others may pass through it
    // As Docker makes ./projects/<name> when nobody created it first: root-owned, 0755.
    fs.mkdirSync(path.join(browseRoot, "made-by-docker"), { mode: 0o755 });
    fs.writeFileSync(path.join(browseRoot, "made-by-docker", "README.md"), "# demo\n");
    t = await startTestBridge({ URLBRIDGE_OPERATOR_TOKEN: "", URLBRIDGE_BROWSE_ROOTS: browseRoot });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    recordConsoleProblems(page, consoleProblems);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("logs in with the token printed by the command the login page shows", async () => {
    await page.goto(t.bridge.controlUrl);
    const shown = page.getByTestId("token-command");
    await shown.waitFor();
    const command = (await shown.textContent())!.trim();
    expect(command).toBe(`URLBRIDGE_STATE_DIR=${t.stateDir} npx urlbridge token --show`);
    // Shown whole: nothing scrolled out of sight (the old page cut it off before --show).
    expect(await shown.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await docShot("login.png");
    // Run as the page says, in the checkout, with nothing of this process's URLBRIDGE_* environment.
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: makeTempDir("operator-home") };
    const { stdout } = await run("bash", ["-c", command], { cwd: REPO_ROOT, env });
    expect(stdout.trim()).toBe(fs.readFileSync(path.join(t.stateDir, "operator-token"), "utf8").trim());

    await page.getByLabel("Operator token").fill("not-the-token-at-all");
    await page.getByRole("button", { name: "Log in" }).click();
    const wrong = page.getByTestId("error-message");
    await wrong.waitFor();
    expect(await wrong.textContent()).not.toContain("`");
    expect(await wrong.locator("code").textContent()).toBe(command);

    await page.getByLabel("Operator token").fill(stdout.trim());
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("navigation", { name: "Main" }).waitFor();
  });

  it("refuses write and terminal on a root-owned folder with the exact chown, and adds it once that ran", async () => {
    await goto("Projects");
    await page.getByRole("button", { name: "Add project" }).first().click();
    const form = page.locator("form", { has: page.getByRole("heading", { name: "Add a project" }) });
    expect(await form.getByRole("button", { name: "Cancel" }).count()).toBe(1);
    const browserPanel = page.getByRole("region", { name: "Folder browser" });
    await browserPanel.locator(`button[data-path="${browseRoot}"]`).click();
    await browserPanel.getByRole("button", { name: "made-by-docker" }).click();
    await browserPanel.getByRole("button", { name: "Use this folder" }).click();
    const root = path.join(browseRoot, "made-by-docker");
    expect(await page.getByTestId("chosen-root").textContent()).toBe(root);
    await page.getByLabel("Allow file writes").check();
    await page.getByLabel("Allow terminal commands").check();
    await form.getByRole("button", { name: "Add project" }).click();
    const refusal = form.getByRole("alert");
    await refusal.waitFor();
    const text = (await refusal.textContent())!;
    expect(text).toContain("root_not_writable");
    expect(text).toContain(`terminal commands act as uid ${TEST_AGENT_UID}`);
    expect(await refusal.locator("code").first().textContent()).toBe(
      `sudo chown -R ${TEST_AGENT_UID}:${TEST_AGENT_UID} ${root}`,
    );
    expect(text).not.toContain("`");
    await docShot("add-project-unwritable.png");

    // The operator runs the command the page named (as root here, so without sudo).
    const fix = (await refusal.locator("code").first().textContent())!.replace(/^sudo /, "");
    await run("bash", ["-c", fix]);
    await form.getByRole("button", { name: "Add project" }).click();
    await page.locator('article[data-project="made-by-docker"]').waitFor();
    await page.getByText("Added made-by-docker").waitFor();
    await page.getByRole("button", { name: "Add project" }).first().click();
    expect(await page.getByText("Added made-by-docker").count()).toBe(0);
    await page.locator("form").getByRole("button", { name: "Cancel" }).click();
  });

  it("says who can reach the Init URL while the origin is local, and nothing once a public origin is set", async () => {
    await goto("Sessions");
    const limits = page.getByRole("region", { name: "Session limits" });
    await limits.waitFor();
    expect(await limits.textContent()).not.toContain("limit_reached");
    await page.getByRole("button", { name: "Create session" }).click();
    const card = page.locator('article[data-session="made-by-docker-1"]');
    await card.waitFor();
    const initUrl = await card.getByTestId("init-url").inputValue();
    expect(initUrl.startsWith(`${t.bridge.dataUrl}/v0/init/`)).toBe(true);
    expect(await card.getByTestId("reachability").textContent()).toContain(
      "Only programs on the bridge's own machine can reach this Init URL",
    );
    expect((await card.getByTestId("tools-summary").textContent())?.trim()).toMatch(
      /^\d+ tools and \d+ transport features$/,
    );
    await docShot("control-sessions-local.png");

    await goto("Tunnel");
    expect(await page.getByTestId("reachability").textContent()).toContain("Only programs on the bridge's own machine");
    await page.getByLabel("Public origin").fill("https://bridge.example.com");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved https://bridge.example.com").waitFor();
    expect(await page.getByTestId("reachability").textContent()).toContain("a remote agent can reach them");

    await goto("Sessions");
    await card.waitFor();
    expect(await card.getByTestId("init-url").inputValue()).toMatch(/^https:\/\/bridge\.example\.com\/v0\/init\//);
    expect(await card.getByTestId("reachability").count()).toBe(0);
    await card.getByText("Init prompt to paste").click();
    await docShot("control-sessions.png");
  });

  it("keeps the browser logged in across a bridge restart", async () => {
    const stateDir = t.stateDir;
    await t.close();
    t = await startTestBridge({ URLBRIDGE_OPERATOR_TOKEN: "", URLBRIDGE_BROWSE_ROOTS: browseRoot }, { stateDir });
    // The new bridge listens on new ports: the cookie is per host, not per port, so it goes along.
    await page.goto(`${t.bridge.controlUrl}/#/sessions`);
    await page.getByRole("heading", { level: 1, name: "Sessions" }).waitFor();
    expect(await page.getByRole("button", { name: "Log in" }).count()).toBe(0);
  });

  it("logged no console errors or warnings on the way", () => {
    // The deliberate wrong login answers 401 and the deliberate grant on a root-owned folder 409; Chromium
    // reports each failed request as a console error.
    const unexpected = consoleProblems.filter((p) => !/status of 401/.test(p));
    expect(unexpected).toEqual([
      "error: Failed to load resource: the server responded with a status of 409 (Conflict)",
    ]);
  });
});

describe("documentation screenshots", () => {
  it("are exactly the ones this suite writes, and each is shown somewhere in the docs", () => {
    const present = fs.existsSync(DOC_SHOTS) ? fs.readdirSync(DOC_SHOTS).sort() : [];
    expect(present).toEqual([...DOC_SCREENSHOTS].sort());
    const docs = [
      "README.md",
      ...fs
        .readdirSync(path.join(REPO_ROOT, "docs"))
        .filter((f) => f.endsWith(".md"))
        .map((f) => `docs/${f}`),
    ]
      .map((f) => fs.readFileSync(path.join(REPO_ROOT, f), "utf8"))
      .join("\n");
    for (const name of DOC_SCREENSHOTS) expect(docs, name).toContain(`screenshots/${name}`);
  });
});
