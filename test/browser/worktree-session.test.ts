// The New session form on a git project in Debian's Chromium (issue 31): the worktree choice appears only for a
// project whose folder is a git repository, creates the session in its own worktree from the base typed, and the
// session's card shows the worktree's folder, branch and base.
import fs from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeProjectDir, startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge } from "../helpers/bridge.js";
import { launchChromium, openControlPage } from "../helpers/chromium.js";
import { git, makeRepository } from "../helpers/git-repo.js";
import { ensureWebBuilt } from "./build-web.js";

describe("creating a worktree session in the control UI", () => {
  let t: TestBridge;
  let browser: Browser;
  let page: Page;
  let repo: string;
  const problems: string[] = [];

  beforeAll(async () => {
    await ensureWebBuilt();
    t = await startTestBridge();
    repo = makeRepository();
    git(repo, "branch", "release");
    expect((await t.api("POST", "/api/projects", { name: "plain", root: makeProjectDir("ui-plain") })).status).toBe(
      201,
    );
    expect((await t.api("POST", "/api/projects", { name: "repo", root: repo })).status).toBe(201);
    browser = await launchChromium();
    page = await openControlPage(browser, {
      controlUrl: t.bridge.controlUrl,
      token: TEST_OPERATOR_TOKEN,
      title: "Sessions",
      problems,
      timeoutMs: 12_000,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("offers the worktree only on a git repository, and creates the session in one from the typed base", async () => {
    const project = page.locator("#session-project");
    await project.selectOption({ label: "repo" });
    await page.getByTestId("worktree-choice").waitFor();
    // Hidden again for a folder that is not a repository (the API is asked on every change of project).
    await project.selectOption({ label: "plain" });
    await page.getByTestId("worktree-choice").waitFor({ state: "detached" });
    await project.selectOption({ label: "repo" });
    await page.getByTestId("worktree-choice").waitFor();
    await expect(page.getByLabel("From branch").count()).resolves.toBe(0);
    await page.getByLabel("Own git worktree").check();
    await expect(page.getByLabel("From branch").getAttribute("placeholder")).resolves.toBe("main");
    await page.getByLabel("From branch").fill("release");
    await page.locator("#session-name").fill("ui-worktree");
    await page.getByRole("button", { name: "Create session" }).click();
    const card = page.locator('article[data-session="ui-worktree"]');
    await card.waitFor();
    const shown = await card.locator('[data-test="worktree"]').innerText();
    expect(shown).toContain("repo.worktrees/ui-worktree");
    expect(shown).toContain("urlbridge/ui-worktree");
    expect(shown).toContain("release");
    expect(git(repo, "rev-parse", "urlbridge/ui-worktree").trim()).toBe(git(repo, "rev-parse", "release").trim());
    expect(fs.existsSync(`${repo}.worktrees/ui-worktree/a.txt`)).toBe(true);
    expect(problems).toEqual([]);
  });
});
