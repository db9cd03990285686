// The screenshots docs/ shows, taken by the browser suites: into test-artifacts/ on every run, into docs/screenshots/
// only when asked (UPDATE_SCREENSHOTS=1), so running the tests leaves the checkout clean (issue 32).
import fs from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { REPO_ROOT } from "./build-web.js";

export const DOC_SHOTS = path.join(REPO_ROOT, "docs", "screenshots");

/** Where this run writes them: docs/screenshots/ on purpose only, a git-ignored folder otherwise. */
const SHOTS_OUT =
  process.env.UPDATE_SCREENSHOTS === "1" ? DOC_SHOTS : path.join(REPO_ROOT, "test-artifacts", "docs-screenshots");

/** Every screenshot docs/ may show, each taken by one browser test file on every run (first-run.test.ts checks). */
export const DOC_SCREENSHOTS = {
  "login.png": "first-run.test.ts",
  "add-project-unwritable.png": "first-run.test.ts",
  "control-sessions-local.png": "first-run.test.ts",
  "control-sessions.png": "first-run.test.ts",
  "tunnel-no-tunnel.png": "tunnel-page.test.ts",
  "plugins-not-configured.png": "plugins-page.test.ts",
  "control-changes.png": "changes-view.test.ts",
  "control-worktree.png": "worktree-merge.test.ts",
} as const;

export type DocScreenshot = keyof typeof DOC_SCREENSHOTS;

/** Takes one of the docs' screenshots of the whole page. */
export async function takeDocScreenshot(page: Page, name: DocScreenshot): Promise<void> {
  fs.mkdirSync(SHOTS_OUT, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS_OUT, name), fullPage: true });
}
