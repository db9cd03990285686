// shell_input over MCP: types into an interactive process (shell with interactive: true) through the kernel's
// terminal_input, once per call (the idempotency key makes a retry answer the recorded result), and answers the
// screen after the bounded wait for quiet output, a text or a pattern.
import { z } from "zod";
import { MAX_INPUT_WAIT_MS, MAX_PTY_COLS, MAX_PTY_ROWS } from "../../mutation/terminal/pty/pty-limits.js";
import { screenText } from "./shell.js";
import { answerOf, type McpToolSpec } from "./spec.js";

/** Settling waits for the input's own wait plus room for the journal. */
const SETTLE_MARGIN_MS = 5000;

const input = z.strictObject({
  pid: z.number().int().positive().describe("The pid an interactive shell call answered."),
  text: z.string().optional().describe("Text to type (no Enter unless keys has it)."),
  keys: z
    .array(z.string())
    .optional()
    .describe("Keys after the text: enter, tab, esc, up, down, left, right, backspace, ctrl-c, ctrl-d..."),
  signal: z
    .enum(["INT", "TERM", "HUP", "KILL", "QUIT", "TSTP", "CONT"])
    .optional()
    .describe("Signal its foreground program."),
  rows: z.number().int().min(2).max(MAX_PTY_ROWS).optional().describe("Resize: with cols."),
  cols: z.number().int().min(10).max(MAX_PTY_COLS).optional().describe("Resize: with rows."),
  expect: z.string().optional().describe("Wait until the output shows this text (else until quiet)."),
  pattern: z.string().optional().describe("Or wait for this regular expression."),
  timeout: z.number().int().min(0).max(MAX_INPUT_WAIT_MS).optional().describe("Longest wait in ms."),
});

const shellInput: McpToolSpec = {
  name: "shell_input",
  kernel: "terminal_input",
  title: "Type into an interactive process",
  description: "Type text and keys (or send a signal, or resize) into an interactive process; answers its screen.",
  input,
  contentFields: ["text", "expect", "pattern"],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  // What every answer carries (the input's, or its running envelope), other fields open, as mutation_result does.
  output: () =>
    z.looseObject({ ok: z.literal(true), callId: z.string(), state: z.enum(["succeeded", "pending", "running"]) }),
  async call(args, call) {
    const { keys, ...rest } = args as z.infer<typeof input>;
    const outcome = await call.run(
      "terminal_input",
      { ...rest, ...(keys && keys.length > 0 ? { key: keys.join(",") } : {}) },
      { settleMs: (rest.timeout ?? MAX_INPUT_WAIT_MS) + SETTLE_MARGIN_MS },
    );
    return answerOf(outcome, (body) => {
      const waited = body.waited as { until: string; waitedMs: number };
      return `Waited ${waited.waitedMs} ms (until ${waited.until}). Output:\n${String(body.output)}\n${screenText(body)}`;
    });
  },
};

export const shellInputTools: readonly McpToolSpec[] = [shellInput];
