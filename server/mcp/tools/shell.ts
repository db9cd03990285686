// The shell family over MCP: shell (OpenCode's command, workdir, timeout in ms, background) over the kernel's
// terminal, and shell_output / shell_stop for the background processes it starts. All pass the terminal gate,
// the command guard and the sandbox, and each call is a journaled intent.
import { z } from "zod";
import type { TerminalOutput } from "../../mutation/terminal/terminal.js";
import { DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS } from "../../mutation/terminal/terminal-run.js";
import { answerOf, MAX_SETTLE_MS, type McpToolSpec } from "./spec.js";

/** How long past its own timeout a foreground call waits (a queued command may wait its timeout for a slot). */
const SETTLE_MARGIN_MS = 15_000;
const BACKGROUND_SETTLE_MS = 60_000;
const DEFAULT_TAIL_LINES = 100;
const MAX_TAIL_LINES = 2000;
const SHELL_ANNOTATIONS = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
} as const;

const shellInput = z.strictObject({
  command: z.string().min(1).describe("The shell command line (sh -c), run in the project's sandbox."),
  workdir: z
    .string()
    .min(1)
    .optional()
    .describe("Folder to run in, relative to the project root or as /project/...; default the root."),
  timeout: z
    .number()
    .int()
    .min(MIN_TIMEOUT_MS)
    .max(MAX_TIMEOUT_MS)
    .optional()
    .describe(
      `Milliseconds before the command's process tree is killed (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS}). Not with background. A call answers within ${MAX_SETTLE_MS / 1000} s: a longer command answers state "running" with next, the mutation_result call that returns its output.`,
    ),
  background: z
    .boolean()
    .optional()
    .describe(
      "true: start a long-running process (a dev server) and answer after its start-up with its URLs, pid and log file; stop it with shell_stop.",
    ),
});

/** A terminal answer as text: exit code, stdout, stderr (foreground), or a background process's start-up. */
export function terminalText(body: Record<string, unknown>): string {
  const out = body as unknown as TerminalOutput;
  if (out.mode === "foreground") {
    const status = out.exitCode === null ? `ended by ${out.signal ?? "a signal"}` : `exit code ${out.exitCode}`;
    const parts = [`${status} after ${out.durationMs} ms`];
    if (out.stdout) parts.push(out.stdout);
    if (out.stderr) parts.push(`stderr:\n${out.stderr}`);
    if (out.leftoversKilled)
      parts.push(`${out.leftoversKilled} process(es) it left running were ended; start servers with background: true.`);
    return parts.join("\n");
  }
  if (out.mode === "background") {
    const lines = [
      `Background process ${out.pid} ${out.processState} (start-up: ${out.startup}, ${out.startupMs} ms). Log file: ${out.logFile} (shell_output reads it).`,
    ];
    if (out.detectedUrls.length > 0) lines.push(`URLs: ${out.detectedUrls.join(" ")}`);
    if (out.processState === "running") lines.push(`Stop it with shell_stop pid=${out.pid}.`);
    if (out.transcript) lines.push(out.transcript);
    return lines.join("\n");
  }
  if (out.mode === "stop") return `Stopped process ${out.pid} (${out.command}) in ${out.durationMs} ms.`;
  return JSON.stringify(body);
}

const shell: McpToolSpec = {
  name: "shell",
  kernel: "terminal",
  title: "Run a shell command",
  description:
    "Run a shell command in the project (sandboxed, environment scrubbed) and answer its exit code, stdout and stderr (long output keeps head and tail). Foreground commands wait for a machine-wide slot and are killed after timeout ms; background: true starts a server instead.",
  input: shellInput,
  contentFields: ["command"],
  annotations: SHELL_ANNOTATIONS,
  async call(args, call) {
    const { command, workdir, timeout, background } = args as z.infer<typeof shellInput>;
    const settleMs = background ? BACKGROUND_SETTLE_MS : 2 * (timeout ?? DEFAULT_TIMEOUT_MS) + SETTLE_MARGIN_MS;
    const outcome = await call.run(
      "terminal",
      {
        command,
        ...(workdir !== undefined ? { cwd: workdir } : {}),
        ...(timeout !== undefined ? { timeout } : {}),
        ...(background ? { bg: true } : {}),
      },
      { settleMs },
    );
    return answerOf(outcome, terminalText);
  },
};

const outputInput = z.strictObject({
  logFile: z.string().min(1).describe("The logFile a background shell call answered."),
  lines: z
    .number()
    .int()
    .min(1)
    .max(MAX_TAIL_LINES)
    .optional()
    .describe(`Last lines to show (default ${DEFAULT_TAIL_LINES}).`),
});

/** Single-quotes a word for sh. */
function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

const shellOutput: McpToolSpec = {
  name: "shell_output",
  kernel: "terminal",
  title: "Read a background process's log",
  description: "The last lines of a background process's log file (tail, run as a shell command in the sandbox).",
  input: outputInput,
  contentFields: [],
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async call(args, call) {
    const { logFile, lines } = args as z.infer<typeof outputInput>;
    const outcome = await call.run(
      "terminal",
      { command: `tail -n ${lines ?? DEFAULT_TAIL_LINES} ${shellQuote(logFile)}`, timeout: 10_000 },
      { settleMs: 2 * 10_000 + SETTLE_MARGIN_MS },
    );
    return answerOf(outcome, terminalText);
  },
};

const stopInput = z.strictObject({
  pid: z.number().int().positive().describe("The pid a background shell call answered."),
});

const shellStop: McpToolSpec = {
  name: "shell_stop",
  kernel: "terminal",
  title: "Stop a background process",
  description: "End a background process this session started, with its whole process tree.",
  input: stopInput,
  contentFields: [],
  annotations: SHELL_ANNOTATIONS,
  async call(args, call) {
    return answerOf(await call.run("terminal", { stop: args.pid }), terminalText);
  },
};

export const shellTools: readonly McpToolSpec[] = [shell, shellOutput, shellStop];
