// A local process on the bridge's MCP socket, as a hostile one would use it (the s24 safety review): it presents
// one capability and then another, sends calls the capability does not list on the direct tools/call path, walks
// out of the root through it, sends partial, endless and oversized lines. Each attack ends as the data plane would
// end it: nothing runs that the line's own capability would not run over HTTP. Then one that does not hold yet:
// wrong capabilities on the socket are not counted by the data plane's unknown-token throttle, and a connection
// that sends calls without reading the answers makes the bridge buffer all of them.
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../server/log.js";
import { STATE_FILE_NAME } from "../../../server/store/database.js";
import { UNKNOWN_TOKEN_BASE_DELAY_MS, UNKNOWN_TOKEN_FREE } from "../../../server/gateway/unknown-token-throttle.js";
import { makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { toolCall as call } from "../../helpers/mcp-direct-cases.js";
import { bearerOf, connectLines, type LineClient } from "../../helpers/mcp-socket.js";
import { waitUntil } from "../mutation/terminal-helpers.js";

const LEGACY_INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "attack-test", version: "0" } },
};

type Answer = {
  id?: unknown;
  result?: {
    isError?: boolean;
    structuredContent?: { ok?: boolean; errorCode?: string };
    content?: Array<{ text: string }>;
  };
  error?: { code: number; message: string };
};

describe("a local process on the MCP socket", () => {
  let t: TestBridge;
  let a: AgentSession;
  let b: AgentSession;
  let socketFile: string;
  let outside: string;
  let bRoot: string;
  const clients: LineClient[] = [];

  /** A connection past the hello, pinned to a 2025 revision (where plain tools/call take the direct path). */
  const connect = async (bearer: string): Promise<LineClient> => {
    const c = await connectLines(socketFile);
    clients.push(c);
    c.send({ "urlbridge/hello": { v: 1, bearer } });
    expect(JSON.parse(await c.next())).toEqual({ "urlbridge/ready": { v: 1 } });
    c.send(LEGACY_INIT);
    expect(JSON.parse(await c.next())).toMatchObject({ id: 0, result: { protocolVersion: "2025-06-18" } });
    c.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return c;
  };
  const answer = async (c: LineClient) => JSON.parse(await c.next()) as Answer;

  beforeAll(async () => {
    t = await startTestBridge();
    a = await t.session({ write: true, terminal: true, name: "project-a" });
    b = await t.session({ write: true, terminal: true, root: (bRoot = makeTempDir("project-b")), name: "project-b" });
    fs.writeFileSync(path.join(t.projectDir, "notes.txt"), "alpha\n");
    outside = makeTempDir("socket-outside");
    fs.writeFileSync(path.join(outside, "secret.txt"), "outside secret\n");
    fs.symlinkSync(outside, path.join(t.projectDir, "escape"));
    socketFile = path.join(t.stateDir, "mcp.sock");
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await t.close();
  });

  it.each([
    ["write", { path: "via-read-cap.txt", content: "x\n" }],
    ["edit", { path: "notes.txt", oldString: "alpha", newString: "omega" }],
    ["patch", { patchText: "*** Begin Patch\n*** Add File: via-read-cap.txt\n+x\n*** End Patch" }],
    ["shell", { command: "touch via-read-cap.txt" }],
  ])("runs no %s on a read capability, on the direct path's shape", async (tool, args) => {
    const c = await connect(bearerOf(a.r));
    c.send(call(1, tool, args));
    const reply = await answer(c);
    expect(reply.id).toBe(1);
    expect(reply.result?.isError ?? reply.error !== undefined).toBe(true);
    expect(fs.existsSync(path.join(t.projectDir, "via-read-cap.txt"))).toBe(false);
    expect(fs.readFileSync(path.join(t.projectDir, "notes.txt"), "utf8")).toBe("alpha\n");
  });

  it("moves a line unrun when a read connection presents the mutation capability (the listing is the read one)", async () => {
    const c = await connect(bearerOf(a.r));
    c.send({ "urlbridge/bearer": bearerOf(a.m!) });
    const write = call(2, "write", { path: "upgraded.txt", content: "x\n" });
    c.send(write);
    expect(JSON.parse(await c.next())).toEqual({ "urlbridge/moved": { line: JSON.stringify(write) } });
    expect(fs.existsSync(path.join(t.projectDir, "upgraded.txt"))).toBe(false);
  });

  it("runs a call with the capability of its own line: another session's lands in that session's project only", async () => {
    const c = await connect(bearerOf(a.m!));
    c.send({ "urlbridge/bearer": bearerOf(b.m!) });
    c.send(call(3, "write", { path: "whose.txt", content: "b\n" }));
    expect((await answer(c)).result?.structuredContent?.ok).toBe(true);
    expect(fs.existsSync(path.join(t.projectDir, "whose.txt"))).toBe(false);
    expect(fs.readFileSync(path.join(bRoot, "whose.txt"), "utf8")).toBe("b\n");
    t.bridge.store.activity.flush();
    const rows = t.bridge.store.activity.list({ sessionId: b.sessionId, limit: 5 });
    expect(rows.some((row) => row.tool === "write" && row.params?.via === "stdio")).toBe(true);
  });

  it.each([
    ["read through a symlink out of the root", "read", { path: "escape/secret.txt" }, "symlink_escape"],
    ["read by ..", "read", { path: "../socket-outside/secret.txt" }, "path_outside_root"],
    [
      "write through a symlink out of the root",
      "write",
      { path: "escape/planted.txt", content: "x\n" },
      "symlink_escape",
    ],
    ["grep in a symlinked folder", "grep", { pattern: "secret", path: "escape" }, "symlink_escape"],
  ])(
    "answers %s on the direct path with the containment error, touching nothing outside",
    async (_name, tool, args, code) => {
      const c = await connect(bearerOf(a.m!));
      c.send(call(4, tool, args));
      const reply = await answer(c);
      expect(reply.result).toMatchObject({ isError: true, structuredContent: { ok: false, errorCode: code } });
      expect(JSON.stringify(reply)).not.toContain("outside secret");
      expect(fs.readdirSync(outside)).toEqual(["secret.txt"]);
    },
  );

  it("racing a rotation: a line refused ran nothing, a line answered ran once", async () => {
    const session = await t.session({ write: true, root: t.projectDir, name: "racing-rotation" });
    const c = await connect(bearerOf(session.m!));
    const MAX_LINES = 400;
    const name = (i: number) => `rotation-${i}.txt`;
    const ran = new Set<number>();
    let refusedAt: number | undefined;
    let rotation: Promise<unknown> | undefined;
    // Lines two at a time while the rotation lands wherever it lands; once one is refused, a few more to be sure.
    for (let i = 0; i < MAX_LINES && (refusedAt === undefined || i < refusedAt + 6); i += 2) {
      if (i === 4) rotation = t.api("POST", `/api/sessions/${session.sessionId}/rotate`);
      c.send(call(1000 + i, "write", { path: name(i), content: `${i}\n` }));
      c.send(call(1001 + i, "write", { path: name(i + 1), content: `${i + 1}\n` }));
      for (let k = 0; k < 2; k++) {
        const line = JSON.parse(await c.next()) as Answer & { "urlbridge/refused"?: { line: string } };
        if (line["urlbridge/refused"]) {
          const id = (JSON.parse(line["urlbridge/refused"].line) as { id: number }).id - 1000;
          refusedAt ??= id;
          expect(id).toBeGreaterThanOrEqual(refusedAt);
        } else {
          expect(line.result?.structuredContent?.ok).toBe(true);
          ran.add(Number(line.id) - 1000);
        }
      }
    }
    await rotation;
    expect(refusedAt).toBeDefined();
    // Every line after the first refusal is refused too, and only what ran is on disk.
    for (let i = 0; i < refusedAt! + 6; i++) expect(fs.existsSync(path.join(t.projectDir, name(i)))).toBe(ran.has(i));
    expect([...ran].every((i) => i < refusedAt!)).toBe(true);
  });

  it("runs nothing from a line that never ends, and a line split across writes runs once", async () => {
    const c = await connect(bearerOf(a.m!));
    const half = JSON.stringify(call(5, "write", { path: "split.txt", content: "once\n" }));
    c.sendRaw(half.slice(0, 40));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fs.existsSync(path.join(t.projectDir, "split.txt"))).toBe(false);
    c.sendRaw(`${half.slice(40)}\n`);
    expect((await answer(c)).result?.structuredContent?.ok).toBe(true);
    expect(fs.readFileSync(path.join(t.projectDir, "split.txt"), "utf8")).toBe("once\n");

    const dangling = await connect(bearerOf(a.m!));
    dangling.sendRaw(JSON.stringify(call(6, "write", { path: "dangling.txt", content: "x\n" })));
    dangling.close();
    // The next line on another connection is answered after anything the closed one could have started.
    c.send({ jsonrpc: "2.0", id: 7, method: "ping" });
    expect(await answer(c)).toMatchObject({ id: 7, result: {} });
    expect(fs.existsSync(path.join(t.projectDir, "dangling.txt"))).toBe(false);
  });

  it("closes a connection whose hello never ends, and refuses a 3 MiB line in pieces without running it", async () => {
    const endless = await connectLines(socketFile);
    clients.push(endless);
    endless.sendRaw(`{"urlbridge/hello":{"v":1,"bearer":"${bearerOf(a.m!)}","pad":"${"p".repeat(8192)}`);
    expect(JSON.parse(await endless.next())).toEqual({ "urlbridge/unauthorized": {} });
    await endless.ended;

    const c = await connect(bearerOf(a.m!));
    const big = JSON.stringify(call(8, "write", { path: "huge.txt", content: "y".repeat(3 << 20) }));
    for (let at = 0; at < big.length; at += 256 << 10) c.sendRaw(big.slice(at, at + (256 << 10)));
    c.sendRaw("\n");
    expect(await answer(c)).toMatchObject({ id: 8, error: { code: -32000 } });
    expect(fs.existsSync(path.join(t.projectDir, "huge.txt"))).toBe(false);
    c.send({ jsonrpc: "2.0", id: 9, method: "ping" });
    expect(await answer(c)).toMatchObject({ id: 9, result: {} });
  });
});

// Found by the s24 audit, fixed since: a hello or a line under a urlbridge/bearer that opens nothing was refused at
// once and logged nowhere, a silent oracle for a process that can connect (the bridge's own uid: agent commands
// when the bridge is an ordinary user, SECURITY.md): 30 guesses in 7 ms, one at a time on one connection. Such
// refusals now count toward the data plane's unknown-token throttle under one source ("unix:mcp.sock"), held as
// the 404 is held, and the flood summary names them. (The data plane does not stop a parallel guesser either: past
// 64 held answers go out at once; it holds a sequential one and tells the operator, and so does the socket.)
describe("wrong capabilities on the MCP socket", () => {
  let t: TestBridge;
  const lines: string[] = [];
  beforeAll(async () => {
    t = await startTestBridge(
      { URLBRIDGE_UNKNOWN_TOKEN_THROTTLE: "1" },
      { log: createLogger("warn", (line) => lines.push(line)) },
    );
  });
  afterAll(async () => t.close());

  it("are held as the data plane holds unknown tokens once past the free allowance", async () => {
    const s = await t.session({ name: "guessed" });
    const c = await connectLines(path.join(t.stateDir, "mcp.sock"));
    c.send({ "urlbridge/hello": { v: 1, bearer: bearerOf(s.r) } });
    await c.next();
    const guesses = UNKNOWN_TOKEN_FREE + 10;
    const started = performance.now();
    for (let i = 0; i < guesses; i++) {
      c.send({ "urlbridge/bearer": `Zz${String(i).padStart(6, "0")}` });
      c.send({ jsonrpc: "2.0", id: i + 1, method: "ping" });
      expect(Object.keys(JSON.parse(await c.next()) as object)).toEqual(["urlbridge/refused"]);
    }
    const elapsed = performance.now() - started;
    c.close();
    // The data plane would hold guesses 21-30 at least 100 ms each (doubling); the operator's log would say so.
    expect(elapsed).toBeGreaterThanOrEqual(10 * UNKNOWN_TOKEN_BASE_DELAY_MS);
    expect(await waitUntil(() => lines.some((line) => /unknown/i.test(line)), 1000)).toBe(true);
  });
});

// Found by the s24 audit, fixed since: a connection ran every line as it arrived and queued each answer whatever
// the peer read, so one that never reads made the bridge hold every answer in memory (3,000 reads of a 40 KB file:
// ~380 MiB more RSS in 2 s; over HTTP a connection holds one answer). Now a request holds one of the connection's
// MCP_SOCKET_MAX_IN_FLIGHT slots until its answer is written out (socket-slots.ts) and the bridge stops reading the
// connection at the bound, so such a peer stalls only itself.
describe("a connection that never reads its answers", () => {
  let t: TestBridge;
  beforeAll(async () => {
    t = await startTestBridge();
  });
  afterAll(async () => t.close());

  it("does not make the bridge hold every answer in memory", { timeout: 120_000 }, async () => {
    const CALLS = 3000;
    const s = await t.session({ name: "hoarder" });
    fs.writeFileSync(path.join(t.projectDir, "big.txt"), `${"x".repeat(40_000)}\n`);
    const socket = net.connect(path.join(t.stateDir, "mcp.sock"));
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write(
      `${JSON.stringify({ "urlbridge/hello": { v: 1, bearer: bearerOf(s.r) } })}\n${JSON.stringify(LEGACY_INIT)}\n`,
    );
    // Read the ready line and the initialize answer, then never again.
    await new Promise((resolve) => socket.once("data", resolve));
    socket.pause();
    const rssBefore = process.memoryUsage().rss;
    let lines = "";
    for (let id = 1; id <= CALLS; id++) lines += `${JSON.stringify(call(id, "read", { path: "big.txt" }))}\n`;
    socket.write(lines);
    const answered = () => {
      t.bridge.store.activity.flush();
      const db = new Database(path.join(t.stateDir, STATE_FILE_NAME), { readonly: true, fileMustExist: true });
      try {
        return (db.prepare("SELECT count(*) AS n FROM activity WHERE session_id = ?").get(s.sessionId) as { n: number })
          .n;
      } finally {
        db.close();
      }
    };
    // A call has run once the bridge has recorded it: whatever of its answer is not on the wire is held in memory.
    // Wait until nine in ten have run, or until no more run (a bridge that stops reading a connection that does not
    // read: the fix), bounded.
    let last = -1;
    let still = 0;
    for (let round = 0; round < 240 && still < 4; round++) {
      const now = answered();
      if (now >= CALLS * 0.9) break;
      still = now > 0 && now === last ? still + 1 : 0;
      last = now;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const grownMiB = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    socket.destroy();
    expect(grownMiB).toBeLessThan(100);
  });
});
