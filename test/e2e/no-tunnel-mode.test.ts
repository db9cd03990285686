// The no-tunnel mode an operator without a route to Docker Hub ends up in (README, "No tunnel yet"), run with real
// `docker compose` in a scratch copy of the checkout: the README's fallback block as written (plain
// `docker compose up -d`), then deploy/UPGRADE.md's backup, key copy, upgrade, rollback and restore blocks as
// written, and the hint `urlbridge restore` prints. After each the bridge is up and the session's Init URL answers.
// The checkout starts one release behind this one (a line added to a source file) so that compose really builds it,
// and `image-tag.mjs build` must tag that build instead of building it again; `git pull` brings it to this release.
// Only what would collide with other appliances on this engine differs from the operator's machine, all in .env:
// the project name, the image compose builds (a name of this run's, standing in for urlbridge:local), the host
// ports (so the docs' 127.0.0.1:47433 becomes this run's port) and the edge subnet; the restore block names the
// backup the backup block made.
import { execFile } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentHash, imageInputs } from "../../scripts/image-tag.mjs";
import { encodeUrlText } from "../../server/url-grammar/encode.js";
import { shellBlocks } from "../docs/doc-commands.js";
import { launchChromium, recordConsoleProblems } from "../helpers/chromium.js";
import { buildBridgeImage, BRIDGE_IMAGE, e2eName, REPO_ROOT } from "./support/containers.js";

const execFileAsync = promisify(execFile);
type Body = Record<string, unknown> & { ok: boolean };
const HEALTH_POLLS = 120;
/** The first `up` builds the previous release's image (the dependency layers come from the cache): minutes. */
const BUILD_TIMEOUT_MS = 1_200_000;
const POLL_MS = 1000;
const PREVIOUS_RELEASE_LINE = "// no-tunnel-mode.test.ts: the release before this one\n";

const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-e2e-no-tunnel-")));
const checkout = path.join(scratch, "urlbridge");
const home = path.join(scratch, "home");
const project = e2eName("notunnel")
  .toLowerCase()
  .replace(/[^a-z0-9_-]/g, "-");
/** What compose builds and runs before any content tag is used: urlbridge:local on an operator's machine. */
const COMPOSE_IMAGE = `urlbridge:${project}`;
let firstTag = "";
let controlPort = 0;
let dataPort = 0;
let initUrl = "";
let token = "";

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A shell in the checkout as the operator's: their HOME, their PATH, none of this suite's URLBRIDGE_/COMPOSE_ vars. */
async function sh(script: string): Promise<{ stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    LANG: "C.UTF-8",
    // Debian's bash reads /etc/bash.bashrc when stdin is a socket, where -u trips on an unset PS1.
    PS1: "",
    ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
  };
  try {
    return await execFileAsync("bash", ["-euo", "pipefail", "-c", script], {
      cwd: checkout,
      env,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 1_200_000,
    });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${script}\nfailed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`, { cause: error });
  }
}

/** The block under a `## heading` of deploy/UPGRADE.md (the index-th one), with the docs' control port replaced. */
function upgradeBlock(heading: string, index = 0): string {
  const markdown = fs.readFileSync(path.join(REPO_ROOT, "deploy", "UPGRADE.md"), "utf8");
  const start = markdown.indexOf(`\n## ${heading}\n`);
  expect(start, heading).toBeGreaterThan(0);
  const section = markdown.slice(start + 1).split(/\n## /)[0]!;
  const block = shellBlocks("deploy/UPGRADE.md", section)[index];
  expect(block, `${heading} block ${index}`).toBeDefined();
  return block!.text.replaceAll("127.0.0.1:47433", `127.0.0.1:${controlPort}`);
}

async function health(): Promise<Body & { buildId?: string }> {
  let last: unknown;
  for (let i = 0; i < HEALTH_POLLS; i++) {
    try {
      const response = await fetch(`http://127.0.0.1:${controlPort}/api/health`);
      if (response.ok) return (await response.json()) as Body & { buildId?: string };
      last = response.status;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Error(`the bridge did not answer /api/health: ${String(last)}`);
}

/** Up and serving: health answers, only the bridge runs, and the session's Init URL answers on the host. */
async function expectServing(buildId: string): Promise<void> {
  expect(await health()).toMatchObject({ ok: true, buildId });
  const { stdout } = await sh("docker compose ps --services --status running");
  expect(stdout.trim().split("\n")).toEqual(["bridge"]);
  if (initUrl) expect(((await (await fetch(initUrl)).json()) as Body).ok).toBe(true);
}

const hashOf = (tag: string) => tag.slice(tag.lastIndexOf("-") + 1);

beforeAll(async () => {
  await buildBridgeImage();
  for (const file of [...imageInputs(REPO_ROOT), ".dockerignore", "compose.yaml"]) {
    fs.mkdirSync(path.dirname(path.join(checkout, file)), { recursive: true });
    fs.copyFileSync(path.join(REPO_ROOT, file), path.join(checkout, file));
  }
  fs.cpSync(path.join(REPO_ROOT, "deploy"), path.join(checkout, "deploy"), { recursive: true });
  fs.appendFileSync(path.join(checkout, "server", "main.ts"), PREVIOUS_RELEASE_LINE);
  fs.mkdirSync(path.join(checkout, "projects", "demo"), { recursive: true });
  fs.writeFileSync(path.join(checkout, "projects", "demo", "README.md"), "# demo\n");
  fs.chmodSync(scratch, 0o755);
  if (process.getuid?.() === 0) fs.chownSync(path.join(checkout, "projects", "demo"), 1000, 1000);
  else fs.chmodSync(path.join(checkout, "projects", "demo"), 0o777);
  fs.mkdirSync(home);
  controlPort = await freePort();
  dataPort = await freePort();
  const subnet = `172.31.${100 + (process.pid % 150)}.0/24`;
  fs.writeFileSync(
    path.join(checkout, ".env"),
    [
      `COMPOSE_PROJECT_NAME=${project}`,
      `URLBRIDGE_IMAGE=${COMPOSE_IMAGE}`,
      `URLBRIDGE_CONTROL_PORT=${controlPort}`,
      `URLBRIDGE_DATA_PORT=${dataPort}`,
      `URLBRIDGE_EDGE_SUBNET=${subnet}`,
      "",
    ].join("\n"),
  );
}, 1_200_000);

afterAll(async () => {
  await sh("docker compose down -v --remove-orphans").catch(() => undefined);
  await sh(`docker image rm ${COMPOSE_IMAGE} ${firstTag}`).catch(() => undefined);
  fs.rmSync(scratch, { recursive: true, force: true });
}, 120_000);

describe("the no-tunnel mode, every step as printed", () => {
  it(
    "README's fallback: plain `docker compose up -d` builds and starts the bridge alone, Init URLs on this host",
    async () => {
      const [fallback] = shellBlocks("README.md").filter((b) => b.mode === "docker" && b.text.includes("COMPOSE_FILE"));
      expect(fallback!.text).toMatch(/^docker compose up -d$/m);
      await sh(fallback!.text);
      await health(); // `up -d` returns once the container started; the bridge makes its token as it starts serving
      firstTag = `${BRIDGE_IMAGE.split("-")[0]}-${contentHash(checkout)}`;
      token = (await sh("docker compose exec -T bridge urlbridge token --show")).stdout.trim();
      await sh("docker compose exec -T bridge urlbridge project add demo /projects/demo --write");
      const created = JSON.parse(
        (await sh("docker compose exec -T bridge urlbridge session create demo --json")).stdout,
      );
      initUrl = created.initUrl as string;
      expect(initUrl.startsWith(`http://127.0.0.1:${dataPort}/v0/init/`)).toBe(true);
      await expectServing(hashOf(firstTag));
      const init = (await (await fetch(initUrl)).json()) as { bases: Record<string, string> };
      const write = await fetch(`${init.bases.m}/w?path=notes.txt&raw=${encodeUrlText("before the upgrade\n")}`);
      expect(((await write.json()) as Body).ok).toBe(true);
      const tunnel = await fetch(`http://127.0.0.1:${controlPort}/api/tunnel`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      // No tunnel to watch: no failing lookup of "tunnel" for the Tunnel page to show.
      const view = (await tunnel.json()) as { tunnel: { metricsUrl?: string; error?: string } };
      expect(view.tunnel.metricsUrl ?? null).toBeNull();
      expect(view.tunnel.error ?? null).toBeNull();
    },
    BUILD_TIMEOUT_MS,
  );

  it("shows the no-tunnel mode calmly in Chromium: explained on the Tunnel and Sessions pages, no lookup error", async () => {
    const browser = await launchChromium();
    const problems: string[] = [];
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      recordConsoleProblems(page, problems);
      await page.goto(`http://127.0.0.1:${controlPort}/`);
      await page.getByRole("heading", { name: "urlbridge control plane" }).waitFor();
      await page.keyboard.type(token);
      await page.keyboard.press("Enter");
      const goto = async (title: string) => {
        await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: title }).click();
        await page.getByRole("heading", { level: 1, name: title }).waitFor();
      };
      await goto("Tunnel");
      const explained = page.getByTestId("no-tunnel");
      await explained.waitFor();
      expect(await explained.textContent()).toContain("No tunnel in this mode");
      const reach = page.getByTestId("reachability");
      expect(await reach.getAttribute("class")).toContain("notice-info");
      expect(await reach.textContent()).toMatch(/^\s*No-tunnel mode/);
      const body = (await page.locator("main").textContent())!;
      expect(body).not.toMatch(/ENOTFOUND|getaddrinfo|not ready/);
      await page.screenshot({
        path: path.join(REPO_ROOT, "test-artifacts", "e2e", "tunnel-no-tunnel.png"),
        fullPage: true,
      });
      await goto("Sessions");
      const card = page.getByTestId("reachability").first();
      await card.waitFor();
      expect(await card.getAttribute("class")).toContain("notice-info");
      expect(await card.textContent()).toContain(`http://127.0.0.1:${dataPort}`);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it("`image-tag.mjs build` after compose built the same sources tags that image: one build", async () => {
    const { stdout, stderr } = await sh("node scripts/image-tag.mjs build");
    expect(stdout.trim()).toBe(firstTag);
    expect(stderr).toContain(`${COMPOSE_IMAGE} holds the same content`);
    expect(stderr).toContain("nothing rebuilt");
    const id = async (image: string) => (await sh(`docker image inspect --format '{{.Id}}' ${image}`)).stdout.trim();
    expect(await id(firstTag)).toBe(await id(COMPOSE_IMAGE));
  });

  it("UPGRADE.md: backup, key copy, upgrade and rollback by content tag, `docker compose up -d` each time", async () => {
    await sh(upgradeBlock("Backups", 1));
    expect(fs.statSync(path.join(home, "urlbridge-key", "urlbridge-capability-key")).size).toBe(32);
    // `git pull`: the checkout becomes this release, whose image the suite's setup built (reused, not rebuilt).
    const pull = `cp ${JSON.stringify(path.join(REPO_ROOT, "server", "main.ts"))} server/main.ts`;
    const upgrade = upgradeBlock("Upgrade").replace(/^git pull.*$/m, pull);
    const upgraded = await sh(upgrade);
    expect(upgraded.stderr).toContain(`${BRIDGE_IMAGE} exists (same content), reused`);
    expect(upgraded.stderr).toContain("apply it with: docker compose up -d");
    const previous = /roll back with: node scripts\/image-tag\.mjs use (\S+?)\)/.exec(upgraded.stderr)?.[1];
    expect(previous).toBe(COMPOSE_IMAGE);
    await expectServing(hashOf(BRIDGE_IMAGE));
    await sh(upgradeBlock("Roll back").replace("urlbridge:0.1.0-<old hash>", previous!));
    await expectServing(hashOf(firstTag));
  });

  it("UPGRADE.md's restore, then the start command `urlbridge restore` prints, brings the same sessions back", async () => {
    await sh(upgradeBlock("Backups", 0));
    const backup = fs
      .readdirSync(path.join(home, "urlbridge-backups"))
      .filter((f) => /^urlbridge-\d{4}-\d\d-\d\d\.sqlite$/.test(f));
    expect(backup).toHaveLength(1);
    const restore = upgradeBlock("Restore").replace("urlbridge-2026-12-01.sqlite", backup[0]!);
    const [stop, ...rest] = restore.split("\n");
    expect(stop).toBe("docker compose stop bridge");
    const lastLine = rest.pop()!;
    expect(lastLine).toBe("docker compose up -d");
    const restored = await sh([stop, ...rest].join("\n"));
    const hint = /Start the bridge again \(([^)]+)\)/.exec(restored.stdout)?.[1];
    expect(hint).toBe(lastLine);
    await sh(hint!);
    await expectServing(hashOf(firstTag));
  });
});
