// The operator's merge flow for worktree sessions in Debian's Chromium (issue 31): two sessions of one repository
// change the same line and commit on their own branches; on the Changes page the Worktree panel shows the first
// branch with its diff and merges it as a fast-forward; the second then shows its conflict, a merge is refused
// with the conflicting path listed and nothing changed, and Discard removes its folder and branch.
// It also takes docs/screenshots/control-worktree.png, into docs/ only when UPDATE_SCREENSHOTS=1 (doc-screenshots.ts).
import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, giveToAgent, startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge } from "../helpers/bridge.js";
import { launchChromium, openControlPage } from "../helpers/chromium.js";
import { git, makeRepository, put } from "../helpers/git-repo.js";
import { url } from "../integration/mutation/fixtures.js";
import { ensureWebBuilt } from "./build-web.js";
import { takeDocScreenshot } from "./doc-screenshots.js";

type Body = Record<string, unknown> & { ok: boolean };
interface Created {
  id: string;
  initUrl: string;
  worktree: { path: string; branch: string };
}

const ORIGINAL = "# Settings\ntimeout = 30\nretries = 3\n";

describe("the worktree merge flow in Chromium", () => {
  let t: TestBridge;
  let repo: string;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const sessions: Record<"fast" | "slow", Created> = {} as Record<"fast" | "slow", Created>;
  const panel = () => page.getByTestId("worktree-panel");

  /** The agent of `name` changes the timeout line and commits it on its branch. */
  async function agentCommits(name: "fast" | "slow", timeout: string): Promise<void> {
    const m = (await agentGet<{ bases: { m: string } }>(sessions[name].initUrl)).bases.m;
    const edit = await agentGet<Body>(
      url(m, "e", [
        ["path", "settings.toml"],
        ["old", "timeout = 30"],
        ["new", `timeout = ${timeout}`],
      ]),
    );
    expect(edit).toMatchObject({ ok: true });
    expect(await agentGet<Body>(url(m, "h", [["message", `${name}: timeout ${timeout}`]]))).toMatchObject({ ok: true });
  }

  async function openChanges(name: "fast" | "slow"): Promise<void> {
    await page.goto(`${t.bridge.controlUrl}/#/changes?session=${sessions[name].id}`);
    await panel().waitFor();
  }

  beforeAll(async () => {
    await ensureWebBuilt();
    t = await startTestBridge();
    repo = makeRepository();
    put(repo, "settings.toml", ORIGINAL);
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", "settings");
    giveToAgent(path.dirname(repo));
    const project = await t.api<{ id: string }>("POST", "/api/projects", {
      name: "service",
      root: repo,
      permissions: { write: true, terminal: false },
    });
    for (const name of ["fast", "slow"] as const) {
      const created = await t.api<Created>("POST", "/api/sessions", { projectId: project.body.id, name, worktree: {} });
      expect(created.status).toBe(201);
      sessions[name] = created.body;
    }
    await agentCommits("fast", "10");
    await agentCommits("slow", "60");
    browser = await launchChromium();
    page = await openControlPage(browser, {
      controlUrl: t.bridge.controlUrl,
      token: TEST_OPERATOR_TOKEN,
      title: "Changes",
      problems,
      timeoutMs: 12_000,
    });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("shows the first branch with its diff and merges it as a fast-forward", async () => {
    await openChanges("fast");
    await expect.poll(() => page.getByTestId("worktree-state").textContent()).toContain("merges as a fast-forward");
    expect(await page.getByTestId("worktree-diff").textContent()).toContain("timeout = 10");
    await takeDocScreenshot(page, "control-worktree.png");
    await panel().getByRole("button", { name: "Merge", exact: true }).click();
    await page
      .getByRole("dialog", { name: "Merge urlbridge/fast into main?" })
      .getByRole("button", { name: "Merge" })
      .click();
    await panel().getByRole("status").filter({ hasText: "fast-forward" }).waitFor();
    await panel().locator('[data-outcome="merged"]').waitFor();
    expect(git(repo, "rev-parse", "main").trim()).toBe(git(repo, "rev-parse", "urlbridge/fast").trim());
    expect(fs.readFileSync(path.join(repo, "settings.toml"), "utf8")).toContain("timeout = 10");
  });

  it("shows the second branch's conflict, refuses its merge listing the path, then discards it", async () => {
    await openChanges("slow");
    await page.getByTestId("worktree-conflicts").getByText("settings.toml").waitFor();
    const before = git(repo, "rev-parse", "main").trim();
    await panel().getByLabel("Merge as").selectOption("merge");
    await panel().getByRole("button", { name: "Merge", exact: true }).click();
    await page
      .getByRole("dialog", { name: "Merge urlbridge/slow into main?" })
      .getByRole("button", { name: "Merge" })
      .click();
    const refused = panel().getByRole("alert", { name: "Merge refused" });
    await refused.locator('[data-refused-path="settings.toml"]').waitFor();
    expect(await refused.textContent()).toContain("Nothing was merged.");
    expect(git(repo, "rev-parse", "main").trim()).toBe(before);

    await panel().getByRole("button", { name: "Discard…" }).click();
    await page
      .getByRole("dialog", { name: "Discard urlbridge/slow?" })
      .getByRole("button", { name: "Discard" })
      .click();
    await panel().locator('[data-outcome="discarded"]').waitFor();
    expect(fs.existsSync(sessions.slow.worktree.path)).toBe(false);
    expect(git(repo, "branch", "--list", "urlbridge/slow").trim()).toBe("");
    expect(fs.readFileSync(path.join(repo, "settings.toml"), "utf8")).toContain("timeout = 10");
    // The refused merge's 409 is the only thing the console shows.
    expect(problems).toEqual(["error: Failed to load resource: the server responded with a status of 409 (Conflict)"]);
  });
});
