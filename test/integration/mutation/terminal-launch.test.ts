// bg=1 through the gateway: a real Node HTTP server listening on port 0 is found from its own start-up
// output and answers there; a process that dies during start-up gets an exact foreground repair URL.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isGone } from "../../../server/mutation/terminal/process-tree.js";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { settle, waitUntil, type Body } from "./terminal-helpers.js";

let t: TestBridge;
let s: AgentSession;
const pids: number[] = [];

beforeAll(async () => {
  t = await startTestBridge();
  s = await t.session({ terminal: true, write: true });
  writeAsAgent(
    path.join(t.projectDir, "server.cjs"),
    `const http = require("node:http");
console.log("booting");
const server = http.createServer((req, res) => res.end("served " + req.url));
server.listen(0, "127.0.0.1", () => console.log("listening on http://127.0.0.1:" + server.address().port + "/"));
`,
  );
});

afterAll(async () => {
  await t.close();
  // Closing the bridge ends every background process it started.
  for (const pid of pids) expect(await waitUntil(() => isGone(pid))).toBe(true);
});

describe("bg=1", () => {
  it("reports detectedUrls from a real server's start-up output, and the server answers there", async () => {
    const body = await settle(`${s.m}/x?bg=1&raw=node+server.cjs`);
    expect(body).toMatchObject({
      ok: true,
      state: "succeeded",
      mode: "background",
      processState: "running",
      cwd: "/project",
    });
    const urls = body.detectedUrls as string[];
    expect(urls).toHaveLength(1);
    const url = urls[0]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(body.detectedPorts).toEqual([Number(new URL(url).port)]);
    expect(body.transcript).toBe(`booting\nlistening on ${url}\n`);
    expect(await (await fetch(`${url}ping`)).text()).toBe("served /ping");
    expect(String(body.logFile).startsWith(t.projectDir)).toBe(false);

    // The exact stop URL ends the server's whole tree. It is a bridge-side action (stop=<pid>), not a
    // `kill` command: signal scoping keeps a later command from signalling an earlier command's processes.
    const pid = body.pid as number;
    expect(body.stop).toBe(`${s.m}/x?stop=${pid}`);
    const stopped = await settle(String(body.stop));
    expect(stopped).toMatchObject({ ok: true, mode: "stop", pid, stopped: true });
    expect(await waitUntil(() => isGone(pid))).toBe(true);
  });

  it("a process that dies during start-up fails with background_start_failed and an exact foreground repair URL", async () => {
    const command = `node -e "console.log('starting'); console.error('EADDRINUSE: port taken'); process.exit(3)"`;
    const sent = new URL(`${s.m}/x?bg=1&raw=${encodeUrlText(command)}`).href;
    const body = await settle(sent);
    expect(body).toMatchObject({
      ok: false,
      state: "failed",
      errorCode: "background_start_failed",
      agentAction: "run_foreground",
      processState: "exited",
      exitCode: 3,
    });
    expect(body.transcript).toContain("EADDRINUSE: port taken");
    // The repair keeps the received raw tail byte for byte and drops only bg=1.
    expect(body.repair).toBe(sent.replace("?bg=1&", "?"));

    const foreground = await settle(String(body.repair));
    expect(foreground).toMatchObject({
      ok: true,
      mode: "foreground",
      exitCode: 3,
      stdout: "starting\n",
      stderr: "EADDRINUSE: port taken\n",
    });
  });

  it("a command that simply finishes during start-up is reported as exited, not failed", async () => {
    const body = await settle(`${s.m}/x?bg=1&raw=echo+done`);
    expect(body).toMatchObject({ ok: true, processState: "exited", exitCode: 0, transcript: "done\n" });
  });

  it("refuses timeout= with bg=1 and repairs by dropping it", async () => {
    const body = await settle(`${s.m}/x?bg=1&timeout=5000&raw=sleep+1`);
    expect(body).toMatchObject({ ok: false, errorCode: "conflicting_parameters" });
    expect(body.repair).toBe(`${s.m}/x?bg=1&raw=sleep+1`);
  });

  it("keeps running after the response until the bridge stops", async () => {
    // Without wait=, bg=1 waits out its whole start-up window: the first answer is the launch report, no poll.
    const launched = await agentGet<Body>(`${s.m}/x?bg=1&raw=sleep+300`);
    expect(launched).toMatchObject({ ok: true, state: "succeeded", processState: "running", startup: "window" });
    expect(launched.poll).toBeUndefined();
    const pid = launched.pid as number;
    expect(isGone(pid)).toBe(false);
    pids.push(pid);
  });

  it("a server announcing late in its start-up window answers its URL in the first GET; an explicit wait= still wins", async () => {
    writeAsAgent(
      path.join(t.projectDir, "late.cjs"),
      `const http = require("node:http");
console.log("compiling");
setTimeout(() => {
  const server = http.createServer((req, res) => res.end("late " + req.url));
  server.listen(0, "127.0.0.1", () => console.log("ready at http://127.0.0.1:" + server.address().port + "/"));
}, 1800);
`,
    );
    const first = await agentGet<Body>(`${s.m}/x?bg=1&raw=node+late.cjs`);
    expect(first).toMatchObject({
      ok: true,
      state: "succeeded",
      mode: "background",
      processState: "running",
      startup: "announced",
    });
    const urls = first.detectedUrls as string[];
    expect(urls).toHaveLength(1);
    expect(await (await fetch(`${urls[0]}x`)).text()).toBe("late /x");
    pids.push(first.pid as number);
    // wait=1000 answers before the announcement (the window cannot close before it): running, with a poll.
    const short = await agentGet<Body>(`${s.m}/x?bg=1&wait=1000&run=short&raw=node+late.cjs`);
    expect(short).toMatchObject({ ok: true, state: "running", agentAction: "poll" });
    const settled = await settle(String(short.poll));
    expect(settled).toMatchObject({ ok: true, processState: "running", startup: "announced" });
    expect(settled.detectedUrls).toHaveLength(1);
    pids.push(settled.pid as number);
  });
});
