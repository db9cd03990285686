// /x through the real gateway and journal, with real child processes: exact bytes, exit codes, bounds,
// timeouts that end whole trees, the scrubbed environment, the guard, containment, replay and repeat.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isGone } from "../../../server/mutation/terminal/process-tree.js";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import {
  agentGet,
  makeTempDir,
  startTestBridge,
  TEST_OPERATOR_TOKEN,
  type AgentSession,
  type TestBridge,
  mkdirAsAgent,
} from "../../helpers/bridge.js";
import { settle, waitUntil, type Body } from "./terminal-helpers.js";

const SECRETS: Record<string, string> = {
  URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
  GITHUB_TOKEN: "ghp_terminalTestSecret0001",
  AWS_SECRET_ACCESS_KEY: "aws-terminal-test-secret-0002",
  OPENAI_API_KEY: "sk-terminal-test-secret-0003",
  DATABASE_URL: "postgres://app:hunter2-terminal-0004@db/app",
  TUNNEL_TOKEN: "tunnel-terminal-test-secret-0005",
};

let t: TestBridge;
let s: AgentSession;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  // The bridge runs in this process, so this is the server's own environment.
  for (const [name, value] of Object.entries({
    ...SECRETS,
    URLBRIDGE_TERMINAL_VISIBLE: "",
    TERMINAL_TEST_VISIBLE: "visible-0006",
  })) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  t = await startTestBridge();
  s = await t.session({ terminal: true, write: true });
});

afterAll(async () => {
  await t.close();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

const x = (suffix: string) => settle(`${s.m}/x${suffix}`);
const inProject = (name: string) => path.join(t.projectDir, name);

describe("foreground", () => {
  it("returns the exact bytes of output written with ~ escapes, quotes, &, + and unicode", async () => {
    // + for spaces, so the two spaces inside the quotes are ~s: a raw space would travel as %20, and a
    // target that carries %20 spaces reads its + as plus signs (docs/PROTOCOL.md, "The raw tail").
    const body = await x(
      `?raw=echo+"a&b~s~sc"~necho+'x~qy=z'~nprintf+'caf~u00e9+~u{1F600}~n'~necho+100~p~nprintf+'tab~there'`,
    );
    expect(body).toMatchObject({ ok: true, state: "succeeded", mode: "foreground", exitCode: 0, cwd: "/project" });
    expect(body.stdout).toBe("a&b  c\nx+y=z\ncafé 😀\n100%\ntab\there");
    expect(body.stderr).toBe("");
  });

  it("carries text encoded by the reference encoder byte for byte", async () => {
    const text = `it's "quoted" & <angled> | piped ~tilde #hash 100% +plus ünï`;
    const body = await x(`?raw=${encodeUrlText(`printf '%s' '${text.replace(/'/g, `'\\''`)}'`)}`);
    expect(body.stdout).toBe(text);
  });

  it("reports a non-zero exit as a result, not an error", async () => {
    const body = await x("?raw=echo+out;+echo+err+>&2;+exit+7");
    expect(body).toMatchObject({ ok: true, state: "succeeded", exitCode: 7, stdout: "out\n", stderr: "err\n" });
  });

  it("bounds large output, keeping head and tail with a truncation notice", async () => {
    const body = await x("?raw=seq+1+300000");
    expect(body.ok).toBe(true);
    const stdout = String(body.stdout);
    expect(stdout.startsWith("1\n2\n3\n")).toBe(true);
    expect(stdout.endsWith("299999\n300000\n")).toBe(true);
    const truncated = body.stdoutTruncated as { bytes: number; omittedBytes: number };
    expect(truncated.bytes).toBe(Buffer.byteLength(Array.from({ length: 300000 }, (_, i) => `${i + 1}\n`).join("")));
    expect(stdout).toContain(`[... ${truncated.omittedBytes} bytes omitted`);
    expect(Buffer.byteLength(stdout)).toBeLessThan(17 * 1024);
  });

  it("runs in cwd= inside the project", async () => {
    mkdirAsAgent(inProject("sub/dir"), { recursive: true });
    const body = await x("?cwd=sub/dir&raw=pwd");
    expect(body).toMatchObject({ ok: true, cwd: "/project/sub/dir", stdout: `${inProject("sub/dir")}\n` });
  });

  it("on timeout ends the whole tree: the grandchild is gone", async () => {
    const body = await x(
      `?timeout=800&raw=${encodeUrlText("bash -c 'sleep 300 & echo $! > grandchild.pid; wait'; echo never")}`,
    );
    expect(body).toMatchObject({ ok: false, state: "failed", errorCode: "command_timed_out", timedOut: true });
    expect(body.stdout).toBe("");
    const grandchild = Number(fs.readFileSync(inProject("grandchild.pid"), "utf8"));
    expect(grandchild).toBeGreaterThan(1);
    expect(await waitUntil(() => isGone(grandchild))).toBe(true);
  });

  it("closes the child's stdin, so a command waiting for input ends at once", async () => {
    const body = await x("?timeout=20000&raw=cat;+read+line;+echo+status=$?");
    expect(body).toMatchObject({ ok: true, exitCode: 0, stdout: "status=1\n" });
  });
});

describe("environment", () => {
  it("keeps secrets out of the child's environment", async () => {
    const body = await x("?raw=env");
    expect(body.ok).toBe(true);
    const env = String(body.stdout);
    for (const [name, value] of Object.entries(SECRETS)) {
      expect(env).not.toContain(value);
      expect(env).not.toMatch(new RegExp(`^${name}=`, "m"));
    }
    expect(env).not.toMatch(/^URLBRIDGE_/m);
    expect(env).toMatch(/^TERMINAL_TEST_VISIBLE=visible-0006$/m);
    expect(env).toMatch(/^CI=1$/m);
    expect(env).toMatch(/^TERM=dumb$/m);
    expect(env).toMatch(/^GIT_TERMINAL_PROMPT=0$/m);
  });
});

describe("refusals", () => {
  it.each([
    ["rm -rf /", "recursive_delete_of_system_path"],
    ["sudo rm -fr /*", "recursive_delete_of_system_path"],
    [":(){ :|:& };:", "fork_bomb"],
    ["dd if=/dev/zero of=/dev/sda", "block_device_write"],
    ["shutdown -h now", "power_state"],
  ])("refuses %s with command_refused before running anything", async (command, rule) => {
    const body = await x(`?raw=${encodeUrlText(`touch ran-${rule}; ${command}`)}`);
    expect(body).toMatchObject({ ok: false, errorCode: "command_refused", retryable: false, errorDetail: { rule } });
    expect(fs.existsSync(inProject(`ran-${rule}`))).toBe(false);
  });

  it.each([
    ["..", "path_outside_root"],
    ["/etc", "path_outside_root"],
    ["../../tmp", "path_outside_root"],
    ["missing-dir", "path_not_found"],
  ])("refuses cwd=%s (%s)", async (cwd, code) => {
    const body = await x(`?cwd=${encodeURIComponent(cwd)}&raw=pwd`);
    expect(body).toMatchObject({ ok: false, errorCode: code });
  });

  it("refuses a cwd that escapes through a symlink", async () => {
    const outside = makeTempDir("outside");
    fs.symlinkSync(outside, inProject("link-out"));
    const body = await x("?cwd=link-out&raw=pwd");
    expect(body).toMatchObject({ ok: false, errorCode: "symlink_escape" });
  });

  it("rejects an out-of-range timeout with a clamped repair URL, before any intent exists", async () => {
    const body = await agentGet<Body>(`${s.m}/x?timeout=999999999&raw=echo+hi`);
    expect(body).toMatchObject({ ok: false, errorCode: "invalid_parameter" });
    expect(body.callId).toBeUndefined();
    expect(body.repair).toBe(`${s.m}/x?timeout=600000&raw=echo+hi`);
  });

  it("answers tool_not_enabled when the project's terminal permission is off", async () => {
    const writeOnly = await t.session({ write: true, terminal: false, root: makeTempDir("noterm") });
    const body = await agentGet<Body>(`${writeOnly.m}/x?raw=${encodeUrlText("touch ran")}`);
    expect(body).toMatchObject({ ok: false, errorCode: "tool_not_enabled", errorDetail: { permission: "terminal" } });
  });
});

describe("replay safety", () => {
  it("a replayed GET, sequential or concurrent, runs the command once", async () => {
    const url = `${s.m}/x?raw=${encodeUrlText("echo ran >> once.log; wc -l < once.log")}`;
    const bodies = await Promise.all(Array.from({ length: 8 }, () => settle(url)));
    const again = await settle(url);
    expect(fs.readFileSync(inProject("once.log"), "utf8")).toBe("ran\n");
    for (const body of [...bodies, again]) expect(body).toMatchObject({ ok: true, stdout: "1\n" });
    expect(again.dedupe).toBe("replayed");
    expect(new Set([...bodies, again].map((b) => b.callId)).size).toBe(1);
  });

  it("offers an exact repeat URL once the project changed, and only then", async () => {
    const url = `${s.m}/x?raw=${encodeUrlText("echo tick >> repeat.log; cat repeat.log | wc -l")}`;
    const first = await settle(url);
    expect(first.stdout).toBe("1\n");
    const unchanged = await settle(url);
    expect(unchanged.dedupe).toBe("replayed");
    expect(unchanged.repeat).toBeUndefined();

    const mutation = await x(`?raw=${encodeUrlText("echo changed > other.txt")}`);
    expect(mutation.ok).toBe(true);

    const replay = await settle(url);
    expect(replay).toMatchObject({ dedupe: "replayed", stdout: "1\n" });
    expect(typeof replay.repeat).toBe("string");
    expect(String(replay.repeat).startsWith(`${s.m}/x?`)).toBe(true);
    expect(String(replay.repeat)).toMatch(/[?&]run=[A-Za-z0-9._:-]+&raw=/);
    expect(fs.readFileSync(inProject("repeat.log"), "utf8")).toBe("tick\n");

    const repeated = await settle(String(replay.repeat));
    expect(repeated).toMatchObject({ ok: true, stdout: "2\n" });
    expect(repeated.callId).not.toBe(first.callId);
    const repeatedAgain = await settle(String(replay.repeat));
    expect(repeatedAgain.dedupe).toBe("replayed");
    expect(fs.readFileSync(inProject("repeat.log"), "utf8")).toBe("tick\ntick\n");
  });

  it("offers repeat after a file mutation through /w, and the repeat sees the new file", async () => {
    const url = `${s.m}/x?raw=${encodeUrlText("cat written-by-w.txt 2>/dev/null || echo absent")}`;
    expect((await settle(url)).stdout).toBe("absent\n");
    const write = await settle(`${s.m}/w?path=written-by-w.txt&raw=from+w~n`);
    expect(write).toMatchObject({ ok: true, state: "succeeded" });
    const replay = await settle(url);
    expect(replay).toMatchObject({ dedupe: "replayed", stdout: "absent\n" });
    const repeated = await settle(String(replay.repeat));
    expect(repeated).toMatchObject({ ok: true, stdout: "from w\n" });
  });

  it("a refused command does not count as a project change", async () => {
    const url = `${s.m}/x?raw=${encodeUrlText("echo stable")}`;
    await settle(url);
    await x(`?raw=${encodeUrlText("rm -rf /")}`);
    const replay = await settle(url);
    expect(replay.dedupe).toBe("replayed");
    expect(replay.repeat).toBeUndefined();
  });

  it("runs a command staged with /s via blob= and count=", async () => {
    const script = "printf 'staged & sound\\n'\nprintf 'line two\\n'\n";
    const half = Math.ceil(script.length / 2);
    for (const [i, chunk] of [script.slice(0, half), script.slice(half)].entries()) {
      const ack = await agentGet<Body>(`${s.m}/s?blob=cmd1&i=${i}&count=2&raw=${encodeUrlText(chunk)}`);
      expect(ack.ok).toBe(true);
    }
    const body = await x("?blob=cmd1&count=2");
    expect(body).toMatchObject({ ok: true, exitCode: 0, stdout: "staged & sound\nline two\n" });
  });

  it("refuses a command longer than one argument may be (128 KiB) with a way to run it, running nothing", async () => {
    // A staged blob may hold 160 KiB; the kernel takes at most 128 KiB in one argument (sh -c <command>).
    const marker = "long-command-ran.txt";
    const script = `: ${"x".repeat(140 * 1024)}; echo ran > ${marker}`;
    const chunk = 8 * 1024;
    const count = Math.ceil(script.length / chunk);
    for (let i = 0; i < count; i++) {
      const ack = await agentGet<Body>(
        `${s.m}/s?blob=long1&i=${i}&count=${count}&raw=${encodeUrlText(script.slice(i * chunk, (i + 1) * chunk))}`,
      );
      expect(ack.ok).toBe(true);
    }
    const body = await x(`?blob=long1&count=${count}`);
    expect(body).toMatchObject({
      ok: false,
      errorCode: "invalid_parameter",
      errorDetail: { parameter: "command", maxBytes: 128 * 1024 - 1 },
    });
    expect(String(body.repairHint ?? body.error)).toMatch(/script/);
    expect(fs.existsSync(path.join(t.projectDir, marker))).toBe(false);
  });
});
