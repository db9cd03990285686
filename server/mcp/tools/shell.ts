// The shell family over MCP: shell (OpenCode's command, workdir, timeout in ms, background) over the kernel's
// terminal, and shell_output / shell_stop for the background and interactive processes it starts (shell_input,
// in shell-input.ts, types into the interactive ones). All pass the command guard and the sandbox, and each call
// that acts is a journaled intent.
import { z } from "zod";
import { journaledOutput } from "../../mutation/journal/envelope.js";
import { stopOutput, type TerminalOutput } from "../../mutation/terminal/terminal.js";
import { MAX_VIEW_SCROLLBACK } from "../../mutation/terminal/pty/pty-limits.js";
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
      `Milliseconds before the command's process tree is killed (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS}). Not with background. Past ${MAX_SETTLE_MS / 1000} s the call answers state "running" and next: the mutation_result call for its output.`,
    ),
  background: z
    .boolean()
    .optional()
    .describe(
      "true: start a long-running process (a dev server) and answer after its start-up with its URLs, pid and log file; stop it with shell_stop.",
    ),
  interactive: z
    .boolean()
    .optional()
    .describe(
      "true: run on a terminal (REPL, prompt, full-screen program); answers its screen and pid for shell_input.",
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
    if (out.checkpointNotice) parts.push(`${out.checkpointNotice}.`);
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
  if (out.mode === "pty") return screenText(body);
  return JSON.stringify(body);
}

/** What shell_output answers from the view: a raw page, a screen, or the list of processes. */
function viewText(body: Record<string, unknown>): string {
  if (body.mode === "raw") return String(body.text);
  if (body.mode === "screen") return screenText(body);
  const processes = (body.processes ?? []) as Array<{
    pid: number;
    kind: string;
    processState: string;
    command: string;
  }>;
  if (processes.length === 0) return "No background or interactive processes in this session.";
  return processes.map((p) => `${p.pid} ${p.kind} ${p.processState}: ${p.command}`).join("\n");
}

/** A pty=1 process's screen as text: its state and size, the cursor, then the visible rows. */
export function screenText(body: Record<string, unknown>): string {
  const b = body as {
    pid: number;
    processState: string;
    exitCode?: number | null;
    endReason?: string;
    rows: number;
    cols: number;
    cursor: { row: number; col: number };
    screen: string;
    scrollback?: string[];
  };
  const state =
    b.processState === "running" ? "running" : `exited (${b.endReason ?? "exited"}, exit code ${String(b.exitCode)})`;
  const head = `Interactive process ${b.pid} ${state}; screen ${b.rows}x${b.cols}, cursor row ${b.cursor.row} col ${b.cursor.col}:`;
  return [head, ...(b.scrollback ?? []), b.screen].join("\n");
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
    const { command, workdir, timeout, background, interactive } = args as z.infer<typeof shellInput>;
    const settleMs =
      background || interactive ? BACKGROUND_SETTLE_MS : 2 * (timeout ?? DEFAULT_TIMEOUT_MS) + SETTLE_MARGIN_MS;
    const outcome = await call.run(
      "terminal",
      {
        command,
        ...(workdir !== undefined ? { cwd: workdir } : {}),
        ...(timeout !== undefined ? { timeout } : {}),
        ...(background ? { bg: true } : {}),
        ...(interactive ? { pty: true } : {}),
      },
      { settleMs },
    );
    return answerOf(outcome, terminalText);
  },
};

const outputInput = z.strictObject({
  logFile: z.string().min(1).optional().describe("The logFile a background shell call answered."),
  pid: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Instead: an interactive process's screen. Neither: list this session's processes."),
  offset: z.number().int().min(0).optional().describe("With pid: its raw output from this byte offset."),
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
  title: "Read a process's output",
  description: "A background process's last log lines (tail in the sandbox), or an interactive process's screen (pid).",
  input: outputInput,
  contentFields: [],
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  // A tail's foreground run, a screen, a raw page or the list: what each carries, other fields open (their union
  // would cost 1 KB of tools/list for facts the text rendering carries too).
  output: () => z.looseObject({ ok: z.literal(true), mode: z.enum(["foreground", "screen", "raw", "list"]) }),
  async call(args, call) {
    const { logFile, pid, offset, lines } = args as z.infer<typeof outputInput>;
    // An interactive process's screen or raw bytes; with neither pid nor logFile, this session's processes.
    if (logFile === undefined) {
      const view = await call.run("terminal_view", {
        ...(pid !== undefined ? { pid } : {}),
        ...(offset !== undefined ? { offset } : {}),
        ...(pid !== undefined && offset === undefined && lines !== undefined
          ? { lines: Math.min(lines, MAX_VIEW_SCROLLBACK) }
          : {}),
      });
      return answerOf(view, viewText);
    }
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
  description: "End a background or interactive process this session started, with its whole process tree.",
  input: stopInput,
  contentFields: [],
  annotations: SHELL_ANNOTATIONS,
  output: () => journaledOutput(stopOutput),
  async call(args, call) {
    return answerOf(await call.run("terminal", { stop: args.pid }), terminalText);
  },
};

export const shellTools: readonly McpToolSpec[] = [shell, shellOutput, shellStop];
