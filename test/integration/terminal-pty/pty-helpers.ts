// Starts a pty=1 process directly (no bridge) for the bounds tests: a fresh registry, one session, a bridge-wide
// shutdown signal the caller aborts after its tests.
import { spawnHostPty } from "../../../server/mutation/terminal/pty/host-pty-channel.js";
import { PtyRegistry } from "../../../server/mutation/terminal/pty/pty-registry.js";
import { startPty } from "../../../server/mutation/terminal/pty/pty-start.js";
import type { PtyProcess } from "../../../server/mutation/terminal/pty/pty-process.js";
import { TerminalProcesses } from "../../../server/mutation/terminal/terminal-processes.js";
import { buildChildEnv } from "../../../server/sandbox/env-scrub.js";

export interface TestPtyOptions {
  cwd: string;
  signal: AbortSignal;
  rows?: number;
  cols?: number;
}

export async function startTestPty(command: string, options: TestPtyOptions): Promise<PtyProcess> {
  const size = { rows: options.rows ?? 24, cols: options.cols ?? 120 };
  const record = await startPty({
    command,
    cwdDisplay: "/project",
    ...size,
    open: () => spawnHostPty({ command, cwd: options.cwd, env: buildChildEnv().env, ...size }),
    owner: { sessionId: "s1", projectId: "p1" },
    processes: new TerminalProcesses(),
    ptys: new PtyRegistry(60 * 60 * 1000, 1000),
    signal: options.signal,
  });
  return record.process;
}
