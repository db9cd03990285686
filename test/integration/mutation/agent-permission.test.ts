// File tools and the agent's terminal agree on what the agent may change (issue 27 item 5): a 0444 file and a
// root-owned 0755 folder are refused by /w /e /a and by MCP write/edit/patch with permission_denied and the fix,
// the disk unchanged, and the same session's terminal gets "Permission denied" on the same things.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import { bridgeIsRoot } from "../../../server/sandbox/identity.js";
import { connectMcpClient, tokenOfBase, type McpTestClient } from "../../helpers/mcp-clients.js";
import { agentGet, startTestBridge, TEST_AGENT_UID, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { patchText, snapshotTree, url } from "./fixtures.js";
import { settle } from "./terminal-helpers.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; repairHint?: string };

interface Face {
  write(filePath: string, content: string): Promise<Body>;
  edit(filePath: string, oldString: string, newString: string): Promise<Body>;
  patch(text: string): Promise<Body>;
  read(filePath: string): Promise<Body>;
}

/** errorDetail.reason; a patch's refusal names its operation, the reason under cause (plan.ts opFailure). */
function reasonOf(body: Body): string | undefined {
  const detail = body.errorDetail as { reason?: string; cause?: { reason?: string } } | undefined;
  return detail?.reason ?? detail?.cause?.reason;
}

function urlFace(s: AgentSession): Face {
  return {
    write: (p, content) => agentGet<Body>(url(s.m!, "w", [["path", p]], content)),
    edit: (p, o, n) =>
      agentGet<Body>(
        url(
          s.m!,
          "e",
          [
            ["path", p],
            ["old", o],
          ],
          n,
        ),
      ),
    patch: (text) => agentGet<Body>(url(s.m!, "a", [], text)),
    read: (p) => agentGet<Body>(url(s.r, "r", [["path", p]])),
  };
}

function mcpFace(client: McpTestClient): Face {
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })).structuredContent as Body;
  return {
    write: (filePath, content) => call("write", { filePath, content }),
    edit: (filePath, oldString, newString) => call("edit", { filePath, oldString, newString }),
    patch: (patchText) => call("patch", { patchText }),
    read: (filePath) => call("read", { filePath }),
  };
}

describe.skipIf(!bridgeIsRoot())("file tools refuse what the agent's terminal may not change", () => {
  let t: TestBridge;
  const clients: McpTestClient[] = [];
  beforeAll(async () => {
    t = await startTestBridge();
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await t.close();
  });

  /** A project of its own: locked.txt (the agent's, 0444) and vendor/ (root's, 0755) with lib.txt (root's, 0644). */
  async function project(name: string): Promise<{ root: string; s: AgentSession }> {
    const root = path.join(t.projectDir, name);
    fs.mkdirSync(root);
    const s = await t.session({ root, write: true, terminal: true, name });
    fs.writeFileSync(path.join(root, "locked.txt"), "original\n");
    fs.chownSync(path.join(root, "locked.txt"), TEST_AGENT_UID, TEST_AGENT_UID);
    fs.chmodSync(path.join(root, "locked.txt"), 0o444);
    fs.mkdirSync(path.join(root, "vendor"), { mode: 0o755 });
    fs.writeFileSync(path.join(root, "vendor/lib.txt"), "lib\n", { mode: 0o644 });
    return { root, s };
  }

  const terminal = (s: AgentSession, command: string) => settle(`${s.m}/x?raw=${encodeUrlText(command)}`);

  it.each(["url", "mcp"] as const)(
    "over %s: a 0444 file and a root-owned folder, refused with the fix",
    async (via) => {
      const { root, s } = await project(`perm-${via}`);
      let face = urlFace(s);
      if (via === "mcp") {
        const client = await connectMcpClient(t.bridge.dataUrl, tokenOfBase(s.m!), { sdk: "v2" });
        clients.push(client);
        face = mcpFace(client);
      }
      expect((await face.read("locked.txt")).ok).toBe(true);
      expect((await face.read("vendor/lib.txt")).ok).toBe(true);
      const before = snapshotTree(root);
      const refused = (body: Body, reason: string, fix: string) => {
        expect(body).toMatchObject({ ok: false, errorCode: "permission_denied", retryable: false });
        expect(reasonOf(body)).toBe(reason);
        expect(body.repairHint).toContain(fix);
        expect(body.repairHint).toContain("Nothing was written");
      };

      // The agent's own read-only file: it can make it writable itself.
      const chmodFix = "`chmod u+w locked.txt` in the terminal";
      const first = await face.write("locked.txt", "replaced\n");
      refused(first, "file_read_only", chmodFix);
      if (via === "url") expect(String(first.retry)).toMatch(/\/w\?.*run=/);
      refused(await face.edit("locked.txt", "original", "edited"), "file_read_only", chmodFix);
      refused(
        await face.patch(patchText("*** Update File: locked.txt", "@@", "-original", "+patched")),
        "file_read_only",
        chmodFix,
      );
      // A folder uid 1000 cannot write: only the operator can fix it.
      const chownFix = `sudo chown ${TEST_AGENT_UID}:${TEST_AGENT_UID} ${path.join(root, "vendor")}\``;
      refused(await face.write("vendor/new.txt", "new\n"), "folder_not_writable", chownFix);
      refused(await face.write("vendor/deeper/new.txt", "new\n"), "folder_not_writable", chownFix);
      refused(await face.edit("vendor/lib.txt", "lib", "mine"), "file_read_only", "sudo chown");
      refused(await face.patch(patchText("*** Delete File: vendor/lib.txt")), "folder_not_writable", chownFix);
      refused(
        await face.patch(patchText("*** Update File: vendor/lib.txt", "*** Move to: moved.txt", "@@", "-lib", "+lib2")),
        "file_read_only",
        "sudo chown",
      );
      // All or nothing: an allowed Add before the refused one is not written either.
      refused(
        await face.patch(patchText("*** Add File: allowed.txt", "+fine", "*** Add File: vendor/new.txt", "+no")),
        "folder_not_writable",
        chownFix,
      );
      expect(snapshotTree(root)).toEqual(before);
      expect(fs.statSync(path.join(root, "locked.txt")).mode & 0o7777).toBe(0o444);

      // The terminal of the same session is refused the same things.
      for (const command of [
        "echo replaced > locked.txt",
        "echo new > vendor/new.txt",
        "mkdir vendor/deeper",
        "rm -f vendor/lib.txt",
        "echo mine > vendor/lib.txt",
      ]) {
        const ran = await terminal(s, command);
        expect(ran, command).toMatchObject({ ok: true, state: "succeeded" });
        expect(ran.exitCode, command).not.toBe(0);
        expect(String(ran.stderr), command).toMatch(/Permission denied/);
      }
      expect(snapshotTree(root)).toEqual(before);

      // The fix the answer named, run through the terminal, makes the same write succeed.
      expect(await terminal(s, "chmod u+w locked.txt")).toMatchObject({ ok: true, exitCode: 0 });
      expect((await face.read("locked.txt")).ok).toBe(true);
      // Over URLs the same GET would replay the recorded refusal: the answer's retry is a fresh run.
      const written =
        via === "url" ? await agentGet<Body>(String(first.retry)) : await face.write("locked.txt", "replaced\n");
      expect(written, JSON.stringify(written)).toMatchObject({ ok: true, created: false });
      expect(fs.readFileSync(path.join(root, "locked.txt"), "utf8")).toBe("replaced\n");
    },
  );

  it("refuses a rename out of a sticky folder of another user's file, as the kernel does", async () => {
    const { root, s } = await project("perm-sticky");
    const shared = path.join(root, "shared");
    fs.mkdirSync(shared);
    fs.chmodSync(shared, 0o1777);
    fs.writeFileSync(path.join(shared, "theirs.txt"), "theirs\n");
    fs.chownSync(path.join(shared, "theirs.txt"), 4321, 4321);
    fs.chmodSync(path.join(shared, "theirs.txt"), 0o666);
    const face = urlFace(s);
    expect((await face.read("shared/theirs.txt")).ok).toBe(true);
    const before = snapshotTree(root);
    // Its content may change (mode 0666), but it may not be removed from the sticky folder.
    const body = await face.patch(patchText("*** Delete File: shared/theirs.txt"));
    expect(body).toMatchObject({ ok: false, errorCode: "permission_denied" });
    expect(reasonOf(body)).toBe("sticky_folder");
    const ran = await terminal(s, "rm -f shared/theirs.txt");
    expect(ran.exitCode).not.toBe(0);
    expect(String(ran.stderr)).toMatch(/Operation not permitted|Permission denied/);
    expect(snapshotTree(root)).toEqual(before);
    const edited = await face.edit("shared/theirs.txt", "theirs", "ours");
    expect(edited, JSON.stringify(edited)).toMatchObject({ ok: true });
  });
});
