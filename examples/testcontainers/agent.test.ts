// An agent developer's CI test, written as a user of the package writes it: urlbridge/testcontainers imported by
// package name (here through the package's self-reference; in your project, `npm install -D urlbridge
// testcontainers`), the appliance started on a project folder, then Init, a read and a write as the agent does them.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUrlbridge, type StartedUrlbridge } from "urlbridge/testcontainers";

let urlbridge: StartedUrlbridge | undefined;
let projectDir: string;

/** What an agent does with every URL: GET it and read the JSON. */
async function agentGet(url: string): Promise<Record<string, unknown>> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

beforeAll(async () => {
  projectDir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-under-test-"));
  fs.writeFileSync(path.join(projectDir, "README.md"), "# The project the agent works on\n");
  // Agents' commands run as uid 1000 in the appliance: let it write here whoever runs the test.
  fs.chmodSync(projectDir, 0o777);
  // The image: $URLBRIDGE_IMAGE (the e2e config sets it to the tag it built), else urlbridge:local.
  urlbridge = await startUrlbridge({ project: { dir: projectDir, name: "demo", write: true } });
});

afterAll(async () => {
  await urlbridge?.stop();
  fs.rmSync(projectDir, { recursive: true, force: true });
});

describe("an agent against urlbridge in a container", () => {
  it("completes Init: bases for reads and mutations, and an MCP endpoint", async () => {
    const session = urlbridge!.session!;
    const init = await agentGet(session.initUrl);
    expect(init.bases).toEqual({ r: session.readBase, m: session.mutationBase });
    expect(session.readBase.startsWith(urlbridge!.dataUrl!)).toBe(true);
    expect(session.mcpUrl).toMatch(/\/v0\/[A-Za-z0-9_-]+\/mcp$/);
  });

  it("reads a file of the project", async () => {
    const body = await agentGet(`${urlbridge!.session!.readBase}/r?path=README.md`);
    expect(body.ok).toBe(true);
    expect(JSON.stringify(body)).toContain("The project the agent works on");
  });

  it("writes a file that lands in the project folder on the host", async () => {
    const body = await agentGet(
      `${urlbridge!.session!.mutationBase}/w?path=notes/agent.txt&raw=written+by+the+agent~n`,
    );
    expect(body).toMatchObject({ ok: true });
    expect(fs.readFileSync(path.join(projectDir, "notes", "agent.txt"), "utf8")).toBe("written by the agent\n");
  });

  it("answers MCP at the handed-out URL", async () => {
    const res = await fetch(urlbridge!.session!.mcpUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "example", version: "1" } },
      }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result?: { serverInfo?: { name?: string } } }).result?.serverInfo?.name).toBe(
      "urlbridge",
    );
  });
});
