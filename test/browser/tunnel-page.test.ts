// The Tunnel and Sessions pages in Debian's Chromium in two states an operator meets with the appliance: its
// no-tunnel mode (calm and explained, never "not ready" or a resolver error; the docs' screenshot), and a watched
// tunnel that is down, whose advice names a command shown as code, not between literal backticks.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge } from "../helpers/bridge.js";
import { launchChromium, openControlPage } from "../helpers/chromium.js";
import { ensureWebBuilt } from "./build-web.js";
import { takeDocScreenshot } from "./doc-screenshots.js";
import { closedPort } from "../helpers/closed-port.js";

/** The tunnel watcher polls cloudflared's metrics every 5 s; the first answer (or refusal) comes well within this. */
const WATCH_TIMEOUT_MS = 20_000;

describe("Tunnel page in Chromium", () => {
  let browser: Browser;
  const bridges: TestBridge[] = [];
  const consoleProblems: string[] = [];

  const openPage = (t: TestBridge, title: string): Promise<Page> =>
    openControlPage(browser, {
      controlUrl: t.bridge.controlUrl,
      token: TEST_OPERATOR_TOKEN,
      title,
      problems: consoleProblems,
    });

  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all(bridges.map((b) => b.close()));
  });

  it("shows the appliance's no-tunnel mode as a calm, explained state, not as a failure", async () => {
    // The appliance with deploy/compose.local-data-plane.yaml: data plane published on the host's loopback, no tunnel.
    const t = await startTestBridge({ URLBRIDGE_DATA_PLANE_ON_HOST: "1" }, { appliance: true });
    bridges.push(t);
    const page = await openPage(t, "Tunnel");
    const reach = page.getByTestId("reachability");
    expect(await reach.getAttribute("class")).toContain("notice-info");
    expect(await reach.textContent()).toContain("No-tunnel mode");
    const panel = (await page.getByTestId("no-tunnel").textContent())!;
    expect(panel).toContain("No tunnel in this mode");
    expect(panel).toContain("docker compose up -d");
    const text = (await page.locator("main").textContent())!;
    expect(text).not.toMatch(/not ready|ENOTFOUND|getaddrinfo|`/);
    await takeDocScreenshot(page, "tunnel-no-tunnel.png");

    await t.session({ name: "local" });
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Sessions" }).click();
    const onCard = page.locator('article[data-session="local-1"]').getByTestId("reachability");
    await onCard.waitFor();
    expect(await onCard.getAttribute("class")).toContain("notice-info");
    expect(await onCard.textContent()).toContain("No-tunnel mode");
  });

  it("shows a down tunnel's advice with its command as code, never literal backticks, on Tunnel and Sessions", async () => {
    const t = await startTestBridge({
      URLBRIDGE_TUNNEL_METRICS: `http://127.0.0.1:${await closedPort()}`,
      URLBRIDGE_PUBLIC_ORIGIN: "https://bridge.example.com",
    });
    bridges.push(t);
    // Through the API: the session helper would fetch its Init URL, on an origin nothing here resolves.
    const project = await t.api<{ id: string }>("POST", "/api/projects", { name: "watched", root: t.projectDir });
    expect((await t.api("POST", "/api/sessions", { projectId: project.body.id })).status).toBe(201);
    const page = await openPage(t, "Tunnel");
    const reach = page.getByTestId("reachability");
    // Until the first metrics check the origin is taken as public; Refresh asks again.
    const deadline = Date.now() + WATCH_TIMEOUT_MS;
    while (!(await reach.textContent())?.includes("no live edge connection")) {
      expect(Date.now(), "the tunnel watcher reported nothing").toBeLessThan(deadline);
      await page.waitForTimeout(500);
      await page.getByRole("button", { name: "Refresh" }).click();
    }
    expect(await reach.getAttribute("class")).toContain("notice-warn");
    expect(await reach.textContent()).not.toContain("`");
    expect(await reach.locator("code").allTextContents()).toEqual(["docker compose logs tunnel"]);

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Sessions" }).click();
    const onCard = page.locator('article[data-session="watched-1"]').getByTestId("reachability");
    await onCard.waitFor();
    expect(await onCard.textContent()).not.toContain("`");
    expect(await onCard.locator("code").allTextContents()).toEqual(["docker compose logs tunnel"]);
  });

  it("logged no console errors or warnings", () => {
    expect(consoleProblems).toEqual([]);
  });
});
