// Debian's Chromium for browser tests and the gym's browsing reader: one path, one set of flags.
// The background-networking flags matter here: this machine refuses Chromium's calls home, many at a time.
import { chromium, type Browser, type Page } from "playwright-core";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** Collects the page's console errors and warnings and its uncaught errors into `problems` (tests expect none). */
export function recordConsoleProblems(page: Page, problems: string[]): void {
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
}

export interface ControlPageOptions {
  controlUrl: string;
  /** The operator token typed at the login page. */
  token: string;
  /** The main navigation's link, and the page's h1. */
  title: string;
  problems: string[];
  timeoutMs?: number;
}

/** A fresh browser context (login cookies do not tell ports apart), logged in by keyboard, on the named page. */
export async function openControlPage(browser: Browser, options: ControlPageOptions): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  if (options.timeoutMs !== undefined) page.setDefaultTimeout(options.timeoutMs);
  recordConsoleProblems(page, options.problems);
  await page.goto(options.controlUrl);
  await page.getByRole("heading", { name: "urlbridge control plane" }).waitFor();
  await page.keyboard.type(options.token);
  await page.keyboard.press("Enter");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: options.title }).click();
  await page.getByRole("heading", { level: 1, name: options.title }).waitFor();
  return page;
}
