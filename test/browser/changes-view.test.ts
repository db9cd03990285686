// The operator's Changes view in Debian's Chromium (issue 30, item 5): an agent writes, edits and patches files
// through its URL routes; the operator opens Changes, reads the diff diff2html renders, pages through a diff
// longer than one API page, reverts one file (the bytes on disk come back exactly), and meets a conflict when
// another session changed a file since, which only a confirmed forced revert overwrites.
// It also takes docs/screenshots/control-changes.png, into docs/ only when UPDATE_SCREENSHOTS=1 (doc-screenshots.ts).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentGet,
  giveToAgent,
  startTestBridge,
  TEST_OPERATOR_TOKEN,
  type AgentSession,
  type TestBridge,
} from "../helpers/bridge.js";
import { launchChromium, recordConsoleProblems } from "../helpers/chromium.js";
import { url } from "../integration/mutation/fixtures.js";
import { ensureWebBuilt, REPO_ROOT } from "./build-web.js";
import { takeDocScreenshot } from "./doc-screenshots.js";

type Body = Record<string, unknown> & { ok: boolean; callId?: string };

const ARTIFACTS = path.join(REPO_ROOT, "test-artifacts", "browser");
const DESKTOP = { width: 1280, height: 900 };
const NOTES = Buffer.from("first\r\nsecond\r\nthird\r\n");
const LOGO = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0xff, 0x00]);
/** Longer than one diff page (32 KiB), so deleting it makes the session's diff page. */
const BIG_LINES = 1500;
const BIG = Array.from(
  { length: BIG_LINES },
  (_, i) => `line ${String(i + 1).padStart(4, "0")} of the generated file\n`,
).join("");

describe("the Changes view in Chromium", () => {
  let t: TestBridge;
  let s: AgentSession;
  let other: AgentSession;
  let browser: Browser;
  let page: Page;
  const consoleProblems: string[] = [];
  const calls: Record<string, string> = {};
  const file = (rel: string) => path.join(t.projectDir, rel);
  const agent = async (base: string, route: string, params: Array<[string, string]>, raw?: string) => {
    const body = await agentGet<Body>(url(base, route, params, raw));
    expect(body).toMatchObject({ ok: true });
    return body.callId!;
  };
  const fileRow = (display: string) => page.locator(`tr[data-file="${display}"]`);
  const diff = () => page.getByTestId("diff");

  beforeAll(async () => {
    await ensureWebBuilt();
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestBridge();
    fs.writeFileSync(file("notes.txt"), NOTES);
    fs.writeFileSync(file("logo.png"), LOGO);
    fs.writeFileSync(file("big.txt"), BIG);
    giveToAgent(t.projectDir);
    s = await t.session({ write: true, name: "worker" });
    other = await t.session({ write: true, name: "other" });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: DESKTOP })).newPage();
    recordConsoleProblems(page, consoleProblems);
    // A missing element fails naming its locator, before the test's own 30 s timeout does without one.
    page.setDefaultTimeout(12_000);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("lists each file the agent changed with its counts and the call that changed it", async () => {
    calls.write = await agent(s.m!, "w", [["path", "src/app.ts"]], "export const answer = 42;\n");
    calls.edit = await agent(s.m!, "e", [
      ["path", "notes.txt"],
      ["old", "second"],
      ["new", "SECOND"],
    ]);
    calls.patch = await agent(
      s.m!,
      "a",
      [],
      "*** Begin Patch\n*** Delete File: logo.png\n*** Delete File: big.txt\n*** End Patch\n",
    );

    await page.goto(t.bridge.controlUrl);
    await page.getByLabel("Operator token").fill(TEST_OPERATOR_TOKEN);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.locator(`article[data-session-id="${s.sessionId}"]`).getByRole("link", { name: "Changes" }).click();
    await page.getByRole("heading", { level: 1, name: "Changes" }).waitFor();
    await fileRow("/project/notes.txt").waitFor();

    expect(await page.getByLabel("Session").inputValue()).toBe(s.sessionId);
    /** File, change, lines, calls: each cell's text as shown. */
    const row = async (display: string) =>
      (await fileRow(display).locator("td").allInnerTexts()).slice(0, 4).map((c) => c.replace(/\s+/g, " ").trim());
    expect(await row("/project/src/app.ts")).toEqual(["/project/src/app.ts", "created", "+1 −0", calls.write]);
    expect(await row("/project/notes.txt")).toEqual(["/project/notes.txt", "changed", "+1 −1", calls.edit]);
    expect(await row("/project/big.txt")).toEqual(["/project/big.txt", "deleted", `+0 −${BIG_LINES}`, calls.patch]);
    // A binary file by its size and sha256, never as text.
    const sha = crypto.createHash("sha256").update(LOGO).digest("hex");
    expect(await row("/project/logo.png")).toEqual([
      "/project/logo.png",
      "deleted",
      `binary: ${LOGO.length} B, sha256 ${sha.slice(0, 12)} → absent`,
      calls.patch,
    ]);
    const callIds = await page.locator("li.call").evaluateAll((els) => els.map((e) => e.getAttribute("data-call")));
    expect(callIds).toEqual([calls.write, calls.edit, calls.patch]);
  });

  it("shows a file's exact diff, unified and side by side", async () => {
    await fileRow("/project/notes.txt").getByRole("button", { name: "Diff" }).click();
    await diff().locator(".d2h-file-wrapper").waitFor();
    expect(await diff().locator(".d2h-file-name").textContent()).toContain("/project/notes.txt");
    const lines = async (kind: "del" | "ins" | "cntx") =>
      diff()
        .locator(`td.d2h-${kind} .d2h-code-line-ctn`)
        .evaluateAll((els) => els.map((e) => e.textContent));
    expect(await lines("del")).toEqual(["second"]);
    expect(await lines("ins")).toEqual(["SECOND"]);
    expect(await lines("cntx")).toEqual(["first", "third"]);
    await takeDocScreenshot(page, "control-changes.png");

    await page.getByLabel("Side by side").check();
    await diff().locator(".d2h-file-side-diff").first().waitFor();
    expect(await lines("ins")).toEqual(["SECOND"]);
    await page.getByLabel("Side by side").uncheck();
  });

  it("pages a diff longer than one API page, asking for each next page with the diff's fingerprint", async () => {
    await page.getByRole("button", { name: "Diff of every file" }).click();
    const paging = page.getByTestId("diff-paging");
    await paging.waitFor();
    expect(await paging.textContent()).toMatch(/Showing 3\d\.\d KiB of \d+\.\d KiB/);
    const lastLine = `line ${BIG_LINES} of the generated file`;
    expect(await diff().getByText(lastLine, { exact: true }).count()).toBe(0);

    // The diff changes between two pages (the agent writes another file): the next page is refused, not mixed in.
    calls.later = await agent(s.m!, "w", [["path", "later.txt"]], "written between two pages\n");
    await paging.getByRole("button", { name: "Load the next page" }).click();
    const refused = page.locator(".diff-view").getByRole("alert");
    await refused.waitFor();
    expect(await refused.textContent()).toContain("This diff changed since the page");
    await page.getByRole("button", { name: "Load the diff again from the start" }).click();
    await refused.waitFor({ state: "detached" });

    const next = page.waitForRequest((r) => r.url().includes("offset=") && r.url().includes("fingerprint="));
    await paging.getByRole("button", { name: "Load the next page" }).click();
    await next;
    await paging.waitFor({ state: "detached" });
    expect(await diff().getByText(lastLine, { exact: true }).count()).toBe(1);
    // Each file once, tagged as what happened to it (a side named /dev/null is a created or deleted file).
    const tags = (await diff().locator(".d2h-file-header").allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
    expect(tags).toEqual([
      "/project/src/app.ts ADDED",
      "/project/notes.txt CHANGED",
      "/project/big.txt DELETED",
      "/project/later.txt ADDED",
    ]);
    expect(await page.getByTestId("opaque-files").textContent()).toContain("/project/logo.png: binary");
  });

  it("fits a narrow window without horizontal scrolling, the diff scrolling inside its panel (and has a dark scheme)", async () => {
    await page.setViewportSize({ width: 400, height: 820 });
    await page.getByLabel("Side by side").check();
    const overflow = await page.evaluate<number>(
      "document.documentElement.scrollWidth - document.documentElement.clientWidth",
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: path.join(ARTIFACTS, "changes-narrow.png") });
    await page.getByLabel("Side by side").uncheck();
    await page.setViewportSize(DESKTOP);
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: path.join(ARTIFACTS, "changes-dark.png") });
    await page.emulateMedia({ colorScheme: "light" });
  });

  it("reverts one file, restoring its bytes exactly", async () => {
    await fileRow("/project/notes.txt").getByRole("button", { name: "Revert file" }).click();
    const dialog = page.getByRole("dialog", { name: "Revert /project/notes.txt?" });
    await dialog.getByRole("button", { name: "Revert" }).click();
    await page.getByRole("status").getByText("Reverted /project/notes.txt: 1 file(s) reverted: 1 restored").waitFor();
    expect(fs.readFileSync(file("notes.txt")).equals(NOTES)).toBe(true);
    // The revert is a change of the session too, listed with its call.
    await page.locator("li.call").nth(4).waitFor();
    expect(await page.locator("li.call").nth(4).textContent()).toContain("revert");
  });

  it("refuses to revert over another session's later change, and overwrites it only when confirmed", async () => {
    const later = await agent(other.m!, "e", [
      ["path", "src/app.ts"],
      ["old", "42"],
      ["new", "43"],
    ]);
    await page.locator(`li.call[data-call="${calls.write}"]`).getByRole("button", { name: "Revert call" }).click();
    await page
      .getByRole("dialog", { name: `Revert call ${calls.write}?` })
      .getByRole("button", { name: "Revert" })
      .click();
    const refused = page.getByRole("alert", { name: "Revert refused" });
    await refused.waitFor();
    const conflict = (await refused.locator('[data-conflict="/project/src/app.ts"]').textContent())!.replace(
      /\s+/g,
      " ",
    );
    expect(conflict).toContain(`changed later by another session's edit call ${later}`);
    expect(fs.readFileSync(file("src/app.ts"), "utf8")).toBe("export const answer = 43;\n");

    await refused.getByRole("button", { name: "Revert anyway…" }).click();
    const confirm = page.getByRole("dialog", { name: "Overwrite the later changes?" });
    expect(await confirm.textContent()).toContain("/project/src/app.ts");
    await confirm.getByRole("button", { name: "Revert anyway" }).click();
    await page.getByRole("status").getByText(`Reverted call ${calls.write}`).waitFor();
    expect(fs.existsSync(file("src/app.ts"))).toBe(false);
  });

  it("logged no console errors or warnings but the refused page's 400 and the refused revert's 409", () => {
    expect(consoleProblems).toEqual([
      "error: Failed to load resource: the server responded with a status of 400 (Bad Request)",
      "error: Failed to load resource: the server responded with a status of 409 (Conflict)",
    ]);
  });
});
