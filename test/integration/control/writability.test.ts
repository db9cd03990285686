// The writability check when write or terminal is granted: the identities that will write (the bridge, and the
// uid terminal commands run as) must create and replace a file in the root, or the API refuses with the fix.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkWritable, hostPathOf, unwritableMessage } from "../../../server/control/writability.js";
import {
  makeTempDir,
  startTestBridge,
  TEST_AGENT_UID,
  TEST_OPERATOR_TOKEN,
  type TestBridge,
} from "../../helpers/bridge.js";
import { runCli } from "../cli/run-cli.js";

const asRoot = process.getuid?.() === 0;

/** A folder as Docker makes ./projects/<name>: root-owned, 0755. */
function rootOwnedFolder(prefix: string): string {
  const dir = makeTempDir(prefix);
  fs.chmodSync(dir, 0o755);
  return dir;
}

describe.skipIf(!asRoot)("writability check (bridge as root, terminal as the project owner)", () => {
  let t: TestBridge;
  beforeAll(async () => {
    t = await startTestBridge();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("refuses terminal on a root-owned folder with the exact chown, and leaves no probe file behind", async () => {
    const root = rootOwnedFolder("unwritable");
    const res = await t.api<{ error: { code: string; message: string } }>("POST", "/api/projects", {
      name: "root-owned",
      root,
      permissions: { write: true, terminal: true },
    });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("root_not_writable");
    expect(res.body.error.message).toContain(`file tools and terminal commands act as uid ${TEST_AGENT_UID}`);
    expect(res.body.error.message).toContain(`sudo chown -R ${TEST_AGENT_UID}:${TEST_AGENT_UID} ${root}`);
    expect(fs.readdirSync(root)).toEqual([]);
    expect((await t.api<unknown[]>("GET", "/api/projects")).body).toEqual([]);
  });

  it("accepts the same folder once the fix is applied", async () => {
    const root = rootOwnedFolder("fixed");
    fs.chownSync(root, TEST_AGENT_UID, TEST_AGENT_UID);
    const res = await t.api<{ permissions: { terminal: boolean } }>("POST", "/api/projects", {
      name: "fixed",
      root,
      permissions: { write: true, terminal: true },
    });
    expect(res.status).toBe(201);
    expect(res.body.permissions.terminal).toBe(true);
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it("accepts a read-only grant, and refuses write alone where only the bridge could write (issue 27 item 5)", async () => {
    const root = rootOwnedFolder("bridge-writes");
    expect(
      (await t.api("POST", "/api/projects", { name: "read", root, permissions: { write: false, terminal: false } }))
        .status,
    ).toBe(201);
    // The bridge (root) could write there, but file tools decide as the agent, uid 1000, as its terminal would.
    const second = rootOwnedFolder("bridge-writes-2");
    const res = await t.api<{ error: { code: string; message: string } }>("POST", "/api/projects", {
      name: "write",
      root: second,
      permissions: { write: true, terminal: false },
    });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("root_not_writable");
    expect(res.body.error.message).toContain(`file tools act as uid ${TEST_AGENT_UID} (the agent)`);
    expect(res.body.error.message).toContain(`sudo chown -R ${TEST_AGENT_UID}:${TEST_AGENT_UID} ${second}\``);
    expect(fs.readdirSync(second)).toEqual([]);
    fs.chownSync(second, TEST_AGENT_UID, TEST_AGENT_UID);
    const fixed = await t.api("POST", "/api/projects", {
      name: "write",
      root: second,
      permissions: { write: true, terminal: false },
    });
    expect(fixed.status).toBe(201);
  });

  it("refuses a PATCH that grants write alone on a root-owned folder", async () => {
    const root = rootOwnedFolder("patched-write");
    const created = await t.api<{ id: string }>("POST", "/api/projects", {
      name: "patched-write",
      root,
      permissions: { write: false, terminal: false },
    });
    const grant = await t.api<{ error: { code: string; message: string } }>(
      "PATCH",
      `/api/projects/${created.body.id}`,
      { permissions: { write: true } },
    );
    expect(grant.status).toBe(409);
    expect(grant.body.error.message).toContain(`sudo chown -R ${TEST_AGENT_UID}:${TEST_AGENT_UID} ${root}`);
  });

  it("refuses the same through the CLI, in one stderr line with the fix", async () => {
    const root = rootOwnedFolder("cli");
    const env = {
      URLBRIDGE_STATE_DIR: t.stateDir,
      URLBRIDGE_CONTROL_PORT: new URL(t.bridge.controlUrl).port,
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    };
    const result = await runCli(["project", "add", "cli", root, "--terminal"], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      new RegExp(`^urlbridge: root_not_writable: .*sudo chown -R ${TEST_AGENT_UID}:${TEST_AGENT_UID} ${root}\\\`.*\n$`),
    );
  });

  it("checks a PATCH that grants terminal, not one that only renames", async () => {
    const root = rootOwnedFolder("patched");
    const created = await t.api<{ id: string }>("POST", "/api/projects", {
      name: "patched",
      root,
      permissions: { write: false, terminal: false },
    });
    const grant = await t.api<{ error: { code: string } }>("PATCH", `/api/projects/${created.body.id}`, {
      permissions: { terminal: true },
    });
    expect(grant.status).toBe(409);
    expect(grant.body.error.code).toBe("root_not_writable");
    expect(
      (await t.api<{ permissions: { terminal: boolean } }>("GET", `/api/projects/${created.body.id}`)).body.permissions
        .terminal,
    ).toBe(false);
    expect((await t.api("PATCH", `/api/projects/${created.body.id}`, { name: "renamed" })).status).toBe(200);
  });
});

describe.skipIf(!asRoot)("checkWritable", () => {
  it("probes the terminal identity in a real child process", async () => {
    const root = rootOwnedFolder("probe");
    const identity = { uid: TEST_AGENT_UID, gid: TEST_AGENT_UID };
    const none = { write: false, agentIdentity: undefined };
    const refused = await checkWritable(root, { ...none, terminal: true, terminalIdentity: identity });
    expect(refused).toMatchObject({ ok: false, writer: "terminal", identity });
    expect(await checkWritable(root, { ...none, terminal: false, terminalIdentity: identity })).toEqual({ ok: true });
    // Write alone probes the agent identity file tools decide with.
    const asAgent = await checkWritable(root, {
      write: true,
      agentIdentity: identity,
      terminal: false,
      terminalIdentity: identity,
    });
    expect(asAgent).toMatchObject({ ok: false, writer: "agent", identity, terminal: false });
    fs.chownSync(root, TEST_AGENT_UID, TEST_AGENT_UID);
    expect(await checkWritable(root, { ...none, terminal: true, terminalIdentity: identity })).toEqual({ ok: true });
    expect(
      await checkWritable(root, { write: true, agentIdentity: identity, terminal: false, terminalIdentity: undefined }),
    ).toEqual({ ok: true });
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it("refuses a folder its owner made read-only (mode 0555)", async () => {
    const root = rootOwnedFolder("read-only");
    const sub = path.join(root, "ro");
    fs.mkdirSync(sub, { mode: 0o555 });
    fs.chownSync(sub, TEST_AGENT_UID, TEST_AGENT_UID);
    const result = await checkWritable(sub, {
      write: false,
      agentIdentity: undefined,
      terminal: true,
      terminalIdentity: { uid: TEST_AGENT_UID, gid: TEST_AGENT_UID },
    });
    expect(result).toMatchObject({ ok: false, writer: "terminal" });
  });
});

describe("the refusal's fix", () => {
  const terminalRefusal = {
    ok: false as const,
    writer: "terminal" as const,
    identity: { uid: 1000, gid: 1000 },
    reason: "Permission denied",
    terminal: true,
  };
  it.each([
    ["/projects/demo", true, "sudo chown -R 1000:1000 projects/demo` on the host (/projects/demo in the container"],
    ["/home/me/code/demo", false, "sudo chown -R 1000:1000 /home/me/code/demo` on the host,"],
    ["/srv/elsewhere", true, "sudo chown -R 1000:1000 /srv/elsewhere` on the host,"],
  ])("for %s (appliance: %s) names %s", (root, appliance, expected) => {
    expect(unwritableMessage(root, terminalRefusal, appliance)).toContain(expected);
  });

  it("asks for a read-write mount when the mount is read-only", () => {
    const message = unwritableMessage(
      "/projects/x",
      {
        ok: false,
        writer: "bridge",
        identity: { uid: 0, gid: 0 },
        reason: "/projects/x is on a read-only mount",
        terminal: false,
      },
      true,
    );
    expect(message).toContain("mount it read-write");
    expect(hostPathOf("/projects", true)).toBe("projects");
  });
});
