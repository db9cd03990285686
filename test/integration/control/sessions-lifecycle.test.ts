import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { agentGet, makeTempDir, startTestBridge, type TestBridge } from "../../helpers/bridge.js";
import { listedToolNames } from "../../helpers/mcp-clients.js";

interface SessionView {
  id: string;
  projectId: string;
  enabled: boolean;
  generation: number;
  initUrl: string;
  tools: string[];
}

async function fetchStatus(url: string): Promise<number> {
  return (await fetch(url)).status;
}

describe("projects and sessions", () => {
  const bridges: TestBridge[] = [];
  const start = async (env: Record<string, string> = {}, stateDir?: string) => {
    const t = await startTestBridge(env, stateDir ? { stateDir } : {});
    bridges.push(t);
    return t;
  };
  afterEach(async () => {
    await Promise.all(bridges.splice(0).map((b) => b.close()));
  });

  it("stores the canonical realpath of a project root and rejects non-directories", async () => {
    const t = await start();
    fs.mkdirSync(path.join(t.projectDir, "real"));
    fs.symlinkSync(path.join(t.projectDir, "real"), path.join(t.projectDir, "alias"));
    fs.writeFileSync(path.join(t.projectDir, "file.txt"), "x");
    const created = await t.api<{ root: string }>("POST", "/api/projects", {
      name: "p",
      root: path.join(t.projectDir, "alias", "."),
    });
    expect(created.status).toBe(201);
    expect(created.body.root).toBe(path.join(t.projectDir, "real"));
    const asFile = await t.api<{ error: { code: string } }>("POST", "/api/projects", {
      name: "q",
      root: path.join(t.projectDir, "file.txt"),
    });
    expect(asFile).toMatchObject({ status: 400, body: { error: { code: "root_not_directory" } } });
    const missing = await t.api<{ error: { code: string } }>("POST", "/api/projects", {
      name: "r",
      root: "/definitely/not/here",
    });
    expect(missing.body.error.code).toBe("root_not_found");
    const relative = await t.api<{ error: { code: string } }>("POST", "/api/projects", {
      name: "s",
      root: "relative/path",
    });
    expect(relative.body.error.code).toBe("root_not_absolute");
    const dup = await t.api<{ error: { code: string } }>("POST", "/api/projects", { name: "p", root: t.projectDir });
    expect(dup).toMatchObject({ status: 409, body: { error: { code: "project_name_taken" } } });
    const bad = await t.api<{ error: { code: string; message: string } }>("POST", "/api/projects", {
      name: "",
      root: t.projectDir,
      extra: 1,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_request");
  });

  it("rotating, disabling or deleting one session leaves every other session's URLs valid", async () => {
    const t = await start();
    const a = await t.session({ name: "a" });
    const b = await t.session({ name: "b" });
    const c = await t.session({ name: "c" });
    const d = await t.session({ name: "d" });

    const rotated = await t.api<SessionView>("POST", `/api/sessions/${a.sessionId}/rotate`);
    expect(rotated.body.generation).toBe(2);
    expect(await fetchStatus(a.initUrl)).toBe(404);
    expect(await fetchStatus(`${a.r}/t?path=.`)).toBe(404);
    expect(await fetchStatus(rotated.body.initUrl)).toBe(200);

    await t.api("POST", `/api/sessions/${b.sessionId}/disable`);
    expect(await fetchStatus(`${b.r}/t?path=.`)).toBe(404);
    await t.api("DELETE", `/api/sessions/${c.sessionId}`);
    expect(await fetchStatus(c.initUrl)).toBe(404);

    expect(await fetchStatus(d.initUrl)).toBe(200);
    expect((await agentGet(`${d.r}/t?path=.`)).ok).toBe(true);

    await t.api("POST", `/api/sessions/${b.sessionId}/enable`);
    expect((await agentGet(`${b.r}/t?path=.`)).ok).toBe(true);
  });

  it("renames a session in place: same id, generation and URLs, the new name everywhere it is shown", async () => {
    const t = await start();
    const a = await t.session({ name: "a" });
    const renamed = await t.api<SessionView & { name: string }>("PATCH", `/api/sessions/${a.sessionId}`, {
      name: "  reviewer bot  ",
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: a.sessionId, name: "reviewer bot", generation: 1, initUrl: a.initUrl });
    expect(await fetchStatus(a.initUrl)).toBe(200);
    const listed = await t.api<Array<{ id: string; name: string }>>("GET", "/api/sessions");
    expect(listed.body.find((s) => s.id === a.sessionId)?.name).toBe("reviewer bot");
  });

  it.each([
    ["an empty name", { name: "   " }, /^name: name is required/],
    ["a missing name", {}, /^name: name is required: text of 1 to 64 characters/],
    ["a name past 64 characters", { name: "x".repeat(65) }, /^name: name is at most 64 characters/],
    ["a newline", { name: "two\nlines" }, /^name: name may not contain control characters/],
    ["another field", { name: "ok", enabled: false }, /enabled/],
  ])("refuses a rename with %s as invalid_request, naming the field", async (_, body, message) => {
    const t = await start();
    const a = await t.session({ name: "a" });
    const refused = await t.api<{ error: { code: string; message: string } }>(
      "PATCH",
      `/api/sessions/${a.sessionId}`,
      body,
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("invalid_request");
    expect(refused.body.error.message).toMatch(message);
    const listed = await t.api<Array<{ id: string; name: string }>>("GET", "/api/sessions");
    expect(listed.body.find((s) => s.id === a.sessionId)?.name).toBe("a-1");
  });

  it("answers not_found when renaming a session that does not exist", async () => {
    const t = await start();
    const missing = await t.api<{ error: { code: string } }>("PATCH", "/api/sessions/s_missing", { name: "x" });
    expect(missing).toMatchObject({ status: 404, body: { error: { code: "not_found" } } });
  });

  it.each([
    ["read-only", {}, undefined],
    ["write and terminal", { write: true, terminal: true }, "stage"],
  ])(
    "a %s session's MCP tools are what tools/list offers its MCP capability, and its URL tools include what MCP leaves out",
    async (_, permissions, urlOnly) => {
      const t = await start();
      const a = await t.session({ name: "mcp-count", ...permissions });
      const view = (await t.api<{ tools: string[]; mcpTools: string[] }>("GET", `/api/sessions/${a.sessionId}`)).body;
      const mcp = (await t.api<{ bearer: string }>("GET", `/api/sessions/${a.sessionId}/mcp`)).body;
      const names = await listedToolNames(t.bridge.dataUrl, mcp.bearer);
      expect(names.length).toBeGreaterThan(0);
      expect([...view.mcpTools].sort()).toEqual([...names].sort());
      if (urlOnly) {
        expect(view.tools).toContain(urlOnly); // a URL-edge helper MCP does not list
        expect(view.mcpTools).not.toContain(urlOnly);
      }
    },
  );

  it("changing a project's root or permissions rotates only that project's sessions", async () => {
    const t = await start();
    const other = makeTempDir("other");
    const p1a = await t.session({ name: "one" });
    const p1b = await t.api<SessionView>("POST", "/api/sessions", { projectId: p1a.projectId });
    const p2 = await t.session({ name: "two", root: other });

    const renamed = await t.api<{ rotatedSessions: string[] }>("PATCH", `/api/projects/${p1a.projectId}`, {
      name: "one-renamed",
    });
    expect(renamed.body.rotatedSessions).toEqual([]);
    expect(await fetchStatus(p1a.initUrl)).toBe(200);

    const patched = await t.api<{ rotatedSessions: string[]; permissions: { write: boolean } }>(
      "PATCH",
      `/api/projects/${p1a.projectId}`,
      {
        permissions: { write: true },
      },
    );
    expect(patched.body.permissions.write).toBe(true);
    expect(patched.body.rotatedSessions.sort()).toEqual([p1a.sessionId, p1b.body.id].sort());
    expect(await fetchStatus(p1a.initUrl)).toBe(404);
    expect(await fetchStatus(p1b.body.initUrl)).toBe(404);
    expect(await fetchStatus(p2.initUrl)).toBe(200);

    const sessions = await t.api<SessionView[]>("GET", "/api/sessions");
    const fresh = sessions.body.find((s) => s.id === p1a.sessionId)!;
    const init = await agentGet<{ bases: { m?: string } }>(fresh.initUrl);
    expect(init.bases.m).toBeDefined();

    const moved = await t.api<{ rotatedSessions: string[] }>("PATCH", `/api/projects/${p2.projectId}`, {
      root: t.projectDir,
    });
    expect(moved.body.rotatedSessions).toEqual([p2.sessionId]);
  });

  it("enforces 16 enabled sessions and 64 definitions with their error codes", async () => {
    const t = await start();
    const project = await t.api<{ id: string }>("POST", "/api/projects", {
      name: "many",
      root: t.projectDir,
      permissions: { write: false, terminal: false },
    });
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) {
      const s = await t.api<SessionView>("POST", "/api/sessions", { projectId: project.body.id });
      expect(s.status).toBe(201);
      ids.push(s.body.id);
    }
    const seventeenth = await t.api<{ error: { code: string } }>("POST", "/api/sessions", {
      projectId: project.body.id,
    });
    expect(seventeenth).toMatchObject({ status: 409, body: { error: { code: "enabled_session_limit_reached" } } });

    for (const id of ids) await t.api("POST", `/api/sessions/${id}/disable`);
    for (let i = 16; i < 64; i++) {
      const s = await t.api<SessionView>("POST", "/api/sessions", { projectId: project.body.id });
      expect(s.status).toBe(201);
      if (i % 16 === 15)
        for (const x of (await t.api<SessionView[]>("GET", "/api/sessions")).body.filter((v) => v.enabled)) {
          await t.api("POST", `/api/sessions/${x.id}/disable`);
        }
    }
    const sixtyFifth = await t.api<{ error: { code: string } }>("POST", "/api/sessions", {
      projectId: project.body.id,
    });
    expect(sixtyFifth).toMatchObject({ status: 409, body: { error: { code: "session_definition_limit_reached" } } });

    const all = (await t.api<SessionView[]>("GET", "/api/sessions")).body;
    expect(all).toHaveLength(64);
    for (const s of all.slice(0, 16)) expect((await t.api("POST", `/api/sessions/${s.id}/enable`)).status).toBe(200);
    const tooMany = await t.api<{ error: { code: string } }>("POST", `/api/sessions/${all[16]!.id}/enable`);
    expect(tooMany.body.error.code).toBe("enabled_session_limit_reached");
  });

  it("keeps capabilities across a restart, and rotates them all when capabilities are ephemeral", async () => {
    const stateDir = makeTempDir("state");
    const first = await start({}, stateDir);
    const s = await first.session();
    await first.close();

    const second = await start({}, stateDir);
    const sessions = (await second.api<SessionView[]>("GET", "/api/sessions")).body;
    expect(sessions[0]!.initUrl.split("/v0/init/")[1]).toBe(s.initUrl.split("/v0/init/")[1]);
    const initPath = new URL(s.initUrl).pathname;
    expect(await fetchStatus(`${second.bridge.dataUrl}${initPath}`)).toBe(200);
    await second.close();

    const third = await start({ URLBRIDGE_EPHEMERAL_CAPABILITIES: "1" }, stateDir);
    expect(await fetchStatus(`${third.bridge.dataUrl}${initPath}`)).toBe(404);
    const after = (await third.api<SessionView[]>("GET", "/api/sessions")).body;
    expect(after[0]!.generation).toBe(2);
    expect(await fetchStatus(after[0]!.initUrl)).toBe(200);
  });

  it("creates the state database and its WAL files with mode 0600", async () => {
    const t = await start();
    await t.session();
    for (const suffix of ["", "-wal", "-shm"]) {
      const file = path.join(t.stateDir, `urlbridge.sqlite${suffix}`);
      expect(fs.existsSync(file)).toBe(true);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    }
  });

  it("deleting a project removes its sessions and their URLs", async () => {
    const t = await start();
    const s = await t.session();
    expect((await t.api("DELETE", `/api/projects/${s.projectId}`)).status).toBe(204);
    expect(await fetchStatus(s.initUrl)).toBe(404);
    expect((await t.api<SessionView[]>("GET", "/api/sessions")).body).toHaveLength(0);
    expect((await t.api<{ error: { code: string } }>("DELETE", `/api/projects/${s.projectId}`)).status).toBe(404);
  });
});
