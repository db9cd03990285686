// Interactive processes over MCP with an official client: shell with interactive: true, shell_input and
// shell_output on real programs (a Python REPL, shell prompts, less, Ctrl-C, a resize), one input per
// idempotency key, and a bridge restart that ends every PTY and says so to the next call.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IDEMPOTENCY_KEY_META } from "../../../server/mcp/call-tool.js";
import { isGone } from "../../../server/mutation/terminal/process-tree.js";
import { startTestBridge } from "../../helpers/bridge.js";
import { startMcpBridge, wrapSession, type McpBridge, type McpTestClient } from "../../helpers/mcp-clients.js";

type Body = Record<string, unknown>;

let b: McpBridge;
let client: McpTestClient;

beforeAll(async () => {
  b = await startMcpBridge({ write: true, terminal: true });
  client = await b.connect("m", { sdk: "v2" });
});
afterAll(async () => {
  await b.close();
});

async function call(name: string, args: Record<string, unknown>, key?: string): Promise<Body> {
  const result = await client.callTool({
    name,
    arguments: args,
    ...(key ? { _meta: { [IDEMPOTENCY_KEY_META]: key } } : {}),
  });
  return { ...(result.structuredContent as Body), isError: result.isError ?? false };
}

async function interactive(command: string): Promise<number> {
  const started = await call("shell", { command, interactive: true });
  expect(started, JSON.stringify(started)).toMatchObject({ ok: true, mode: "pty", processState: "running" });
  return started.pid as number;
}

describe("interactive processes over MCP", () => {
  it("drives a Python REPL and ends it with Ctrl-D", async () => {
    const pid = await interactive("/usr/bin/python3 -q");
    await call("shell_input", { pid, text: "def cube(n): return n ** 3", keys: ["enter", "enter"], expect: ">>>" });
    const answer = await call("shell_input", { pid, text: "cube(5)", keys: ["enter"], expect: ">>>" });
    expect(answer.output).toContain("125");
    expect(String(answer.screen).split("\n")).toContain("125");
    const ended = await call("shell_input", { pid, keys: ["ctrl-d"], expect: "never-printed", timeout: 5000 });
    expect(ended).toMatchObject({ processState: "exited", exitCode: 0 });
  });

  it("answers read -p and y/N prompts, waiting for each prompt", async () => {
    fs.writeFileSync(
      path.join(b.tb.projectDir, "ask-mcp.sh"),
      'read -p "Project? " p\nread -p "Delete $p? [y/N] " a\n[ "$a" = y ] && echo "deleted $p" || echo "kept $p"\nsleep 5\n',
    );
    const pid = await interactive("bash ask-mcp.sh");
    const asked = await call("shell_input", { pid, text: "demo", keys: ["enter"], expect: "[y/N]" });
    expect(asked.screen).toContain("Delete demo? [y/N]");
    const done = await call("shell_input", { pid, text: "n", keys: ["enter"], pattern: "kept \\w+" });
    expect(done.output).toContain("kept demo");
  });

  it("reads less as a screen through shell_output, and lists the processes", async () => {
    fs.writeFileSync(
      path.join(b.tb.projectDir, "rows.txt"),
      `${Array.from({ length: 60 }, (_, i) => `row ${i + 1}`).join("\n")}\n`,
    );
    const pid = await interactive("less rows.txt");
    const view = await call("shell_output", { pid });
    expect(view).toMatchObject({ ok: true, mode: "screen", altScreen: true, rows: 24, cols: 80 });
    expect(String(view.screen).split("\n").slice(0, 3)).toEqual(["row 1", "row 2", "row 3"]);
    expect(view.cursor).toMatchObject({ row: 24 });
    const list = await call("shell_output", {});
    expect(list.processes).toEqual(expect.arrayContaining([expect.objectContaining({ pid, kind: "pty" })]));
    const stopped = await call("shell_stop", { pid });
    expect(stopped).toMatchObject({ ok: true, mode: "stop" });
  });

  const SLEEP_WITH_MARKER = "sh -c 'echo sleeping-$((1+1)); exec sleep 60'";

  it("Ctrl-C ends a command inside a shell but not the shell; stty size sees a resize", async () => {
    const pid = await interactive("bash --norc --noprofile -i");
    // The marker comes from the command itself, so bash has handed it the terminal before Ctrl-C is typed (a Ctrl-C
    // typed sooner reaches bash, and the sleep runs on).
    await call("shell_input", { pid, text: SLEEP_WITH_MARKER, keys: ["enter"], expect: "sleeping-2" });
    await call("shell_input", { pid, keys: ["ctrl-c"] });
    const alive = await call("shell_input", { pid, text: "echo still-$((2+3))", keys: ["enter"], expect: "still-5" });
    expect(alive).toMatchObject({ processState: "running", waited: { until: "text" } });
    await call("shell_input", { pid, rows: 40, cols: 120 });
    const size = await call("shell_input", { pid, text: "stty size", keys: ["enter"], expect: "40 120" });
    expect(size.waited).toMatchObject({ until: "text" });
    await call("shell_stop", { pid });
  });

  it("types once for the same idempotency key sent twice", async () => {
    const pid = await interactive("bash --norc --noprofile -i");
    const args = { pid, text: "echo one >> keyed.txt; echo done-keyed", keys: ["enter"], expect: "done-keyed" };
    const first = await call("shell_input", args, "type-once-1");
    const second = await call("shell_input", args, "type-once-1");
    expect(second.callId).toBe(first.callId);
    expect(fs.readFileSync(path.join(b.tb.projectDir, "keyed.txt"), "utf8")).toBe("one\n");
    await call("shell_stop", { pid });
  });

  it("a bridge restart ends PTY processes, and the next call says so", async () => {
    const pid = await interactive("bash --norc --noprofile -i");
    await client.close();
    await b.tb.close();
    // The launcher (the PTY's process) ended with the bridge, and its tree with it.
    expect(isGone(pid)).toBe(true);
    const tb = await startTestBridge({}, { stateDir: b.tb.stateDir });
    b = wrapSession(tb, b.agent);
    client = await b.connect("m", { sdk: "v2" });
    const after = await call("shell_input", { pid, keys: ["enter"] });
    expect(after).toMatchObject({ ok: false, isError: true, errorCode: "process_not_found" });
    expect(String(after.repairHint)).toContain("restart ends every PTY process");
  });
});
