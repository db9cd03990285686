// deploy/UPGRADE.md end to end: two builds of different content get two content tags (the same content reuses its
// tag), /api/health names the build that runs, and switching the state volume from one tag to the other and back
// keeps projects, sessions, their capability URLs and the journal: replayed mutations do not run again.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { getContainerRuntimeClient } from "testcontainers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildImage, contentHash, imageInputs } from "../../scripts/image-tag.mjs";
import { encodeUrlText } from "../../server/url-grammar/encode.js";
import { startUrlbridge, type StartedUrlbridge, type UrlbridgeSession } from "../../testcontainers/index.js";
import { buildBridgeImage, BRIDGE_IMAGE, e2eName, REPO_ROOT } from "./support/containers.js";

type Body = Record<string, unknown> & { ok: boolean };
const SCRIPT = path.join(REPO_ROOT, "scripts", "image-tag.mjs");
const { version } = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string };

let workDir: string;
let projectDir: string;
let contextB: string;
let tagB: string;
const volume = e2eName("upgrade-state");
let running: StartedUrlbridge | undefined;
let session: UrlbridgeSession;
let sessionsBefore: unknown;

const get = async (url: string) => (await (await fetch(url)).json()) as Body;
const hashOf = (tag: string) => tag.slice(tag.lastIndexOf("-") + 1);

/** Stops whatever runs, then starts `image` on the one state volume, as `docker compose up -d` does after a switch. */
async function runImage(image: string): Promise<StartedUrlbridge> {
  await running?.stop();
  running = await startUrlbridge({
    image,
    stateVolume: volume,
    projectsDir: workDir,
    name: e2eName(`upgrade-${hashOf(image)}`),
  });
  return running;
}

/** The state an operator must find unchanged: the sessions (id, generation, Init path) and projects. */
async function stateOf(urlbridge: StartedUrlbridge) {
  const sessions = await urlbridge.control.request<
    Array<{ id: string; generation: number; initUrl: string; enabled: boolean }>
  >("GET", "/api/sessions");
  const projects = await urlbridge.control.request<unknown[]>("GET", "/api/projects");
  return {
    projects,
    sessions: sessions.map((s) => ({
      id: s.id,
      generation: s.generation,
      enabled: s.enabled,
      init: new URL(s.initUrl).pathname,
    })),
  };
}

beforeAll(async () => {
  await buildBridgeImage();
  workDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-e2e-upgrade-")));
  projectDir = path.join(workDir, "demo");
  fs.mkdirSync(projectDir);
  fs.chmodSync(workDir, 0o755);
  fs.chmodSync(projectDir, 0o777);
  fs.writeFileSync(path.join(projectDir, "README.md"), "# demo\n");
  // The next release: the same build context with one source file changed.
  contextB = path.join(workDir, "context-b");
  for (const file of [...imageInputs(REPO_ROOT), ".dockerignore"]) {
    fs.mkdirSync(path.dirname(path.join(contextB, file)), { recursive: true });
    fs.copyFileSync(path.join(REPO_ROOT, file), path.join(contextB, file));
  }
  fs.appendFileSync(
    path.join(contextB, "server", "main.ts"),
    "// upgrade-rollback.test.ts: the release after this one\n",
  );
  tagB = buildImage(contextB).tag;
}, 1_200_000);

afterAll(async () => {
  await running?.stop().catch(() => undefined);
  const client = await getContainerRuntimeClient();
  await client.container.dockerode
    .getVolume(volume)
    .remove()
    .catch(() => undefined);
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

describe("upgrade and rollback by content tag", () => {
  it("tags each build urlbridge:<version>-<hash of its content>, and the same content reuses its tag", () => {
    expect(BRIDGE_IMAGE).toBe(`urlbridge:${version}-${contentHash(REPO_ROOT)}`);
    expect(tagB).toBe(`urlbridge:${version}-${contentHash(contextB)}`);
    expect(tagB).not.toBe(BRIDGE_IMAGE);
    const again = execFileSync(process.execPath, [SCRIPT, "build"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    expect(again.trim()).toBe(BRIDGE_IMAGE);
  });

  it("records the switch in .env with `use`, naming the tag to roll back to, and refuses a tag that is not built", () => {
    const envFile = path.join(workDir, ".env");
    fs.writeFileSync(envFile, "URLBRIDGE_LOG_LEVEL=debug\n");
    const use = (tag: string) =>
      spawnSync(process.execPath, [SCRIPT, "use", tag, "--env-file", envFile], { encoding: "utf8" });
    expect(use(BRIDGE_IMAGE).status).toBe(0);
    expect(fs.readFileSync(envFile, "utf8")).toBe(`URLBRIDGE_LOG_LEVEL=debug\nURLBRIDGE_IMAGE=${BRIDGE_IMAGE}\n`);
    const upgrade = use(tagB);
    expect(upgrade.status).toBe(0);
    expect(upgrade.stderr).toContain(`roll back with: node scripts/image-tag.mjs use ${BRIDGE_IMAGE}`);
    expect(fs.readFileSync(envFile, "utf8")).toBe(`URLBRIDGE_LOG_LEVEL=debug\nURLBRIDGE_IMAGE=${tagB}\n`);
    const missing = use("urlbridge:0.0.0-000000000000");
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/no image urlbridge:0\.0\.0-000000000000 on this machine/);
    expect(fs.readFileSync(envFile, "utf8")).toContain(`URLBRIDGE_IMAGE=${tagB}`);
  });

  it("runs the first build: health names it, and an agent writes through a session", async () => {
    const a = await runImage(BRIDGE_IMAGE);
    expect(await a.health()).toMatchObject({ ok: true, version, buildId: hashOf(BRIDGE_IMAGE) });
    await a.control.addProject({ name: "demo", root: "/projects/demo", write: true, terminal: true });
    session = await a.control.createSession("demo");
    const write = await get(
      `${session.mutationBase}/w?path=notes.txt&raw=${encodeUrlText("written by the first build\n")}`,
    );
    expect(write).toMatchObject({ ok: true });
    sessionsBefore = await stateOf(a);
  });

  it("upgrades to the second build on the same volume: same state, same URLs, the journal replays", async () => {
    const b = await runImage(tagB);
    expect(await b.health()).toMatchObject({ ok: true, version, buildId: hashOf(tagB) });
    expect(await stateOf(b)).toEqual(sessionsBefore);
    const after = await b.control.session(session.id);
    expect(new URL(after.mutationBase!).pathname).toBe(new URL(session.mutationBase!).pathname);
    fs.writeFileSync(path.join(projectDir, "notes.txt"), "changed on the host\n");
    const replay = await get(
      `${after.mutationBase}/w?path=notes.txt&raw=${encodeUrlText("written by the first build\n")}`,
    );
    expect(replay).toMatchObject({ ok: true, dedupe: "replayed" });
    expect(fs.readFileSync(path.join(projectDir, "notes.txt"), "utf8")).toBe("changed on the host\n");
    expect(
      await get(`${after.mutationBase}/w?path=upgraded.txt&raw=${encodeUrlText("written by the second build\n")}`),
    ).toMatchObject({ ok: true });
  });

  it("rolls back to the first build: health names it again, and everything both builds did is intact", async () => {
    const a = await runImage(BRIDGE_IMAGE);
    expect(await a.health()).toMatchObject({ ok: true, buildId: hashOf(BRIDGE_IMAGE) });
    expect(await stateOf(a)).toEqual(sessionsBefore);
    const back = await a.control.session(session.id);
    for (const [file, content] of [
      ["notes.txt", "written by the first build\n"],
      ["upgraded.txt", "written by the second build\n"],
    ] as const) {
      expect(await get(`${back.mutationBase}/w?path=${file}&raw=${encodeUrlText(content)}`), file).toMatchObject({
        ok: true,
        dedupe: "replayed",
      });
    }
    expect(fs.readFileSync(path.join(projectDir, "notes.txt"), "utf8")).toBe("changed on the host\n");
    expect(fs.readFileSync(path.join(projectDir, "upgraded.txt"), "utf8")).toBe("written by the second build\n");
    const read = await get(`${back.readBase}/r?path=upgraded.txt`);
    expect(read.ok).toBe(true);
  });
});
