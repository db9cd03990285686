// terminal input (/i): types text, named keys or a signal into one of this session's pty=1 processes, or
// resizes it, as one journaled intent: a replayed GET or a retried MCP call with the same key types nothing
// twice. The call can then wait (bounded) for the output to go quiet, or for a text or pattern to appear.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../../errors.js";
import { defineTool, type ToolContext } from "../../../kernel/tool/definition.js";
import { journalControls, MAX_WAIT_MS } from "../../journal/controls.js";
import { runtimeOf } from "../../journal/context.js";
import { keyBytes, KEY_NAMES } from "./pty-keys.js";
import { DEFAULT_QUIET_MS, MAX_INPUT_WAIT_MS, MAX_PTY_COLS, MAX_PTY_ROWS, MAX_VIEW_SCROLLBACK } from "./pty-limits.js";
import { livePty, ptyStateFields, ptyUrlFields, screenFields, screenOf, stateOf, urlsOf } from "./pty-answer.js";
import { stripEscapes, type WaitUntil } from "./pty-process.js";

/** How long a wait takes by default: for quiet output, and for a text or pattern. */
const DEFAULT_QUIET_TIMEOUT_MS = 5000;
const DEFAULT_EXPECT_TIMEOUT_MS = 10_000;
const MAX_TEXT_BYTES = 16 * 1024;
const MAX_PATTERN_CHARS = 200;
/** The output since the input an answer carries (its end), escape sequences removed. */
const OUTPUT_ECHO_CHARS = 4000;
const SIGNALS = ["INT", "TERM", "HUP", "KILL", "QUIT", "TSTP", "CONT", "USR1", "USR2"] as const;

const schema = z.object({
  pid: z.number().int().positive(),
  text: z.string().max(MAX_TEXT_BYTES).optional(),
  /** Named keys after the text, comma-separated: enter, tab, up, ctrl-c, ctrl-d, esc ... */
  key: z.string().max(200).optional(),
  signal: z.enum(SIGNALS).optional(),
  rows: z.number().int().min(2).max(MAX_PTY_ROWS).optional(),
  cols: z.number().int().min(10).max(MAX_PTY_COLS).optional(),
  expect: z.string().min(1).max(MAX_PATTERN_CHARS).optional(),
  pattern: z.string().min(1).max(MAX_PATTERN_CHARS).optional(),
  quiet: z.number().int().min(0).max(MAX_INPUT_WAIT_MS).optional(),
  timeout: z.number().int().min(0).max(MAX_INPUT_WAIT_MS).optional(),
  lines: z.number().int().min(0).max(MAX_VIEW_SCROLLBACK).optional(),
  ...journalControls,
});
type InputArgs = z.infer<typeof schema>;

export const inputOutput = z.strictObject({
  ok: z.literal(true),
  mode: z.literal("input"),
  ...ptyStateFields,
  sent: z
    .strictObject({
      bytes: z.number().int().describe("Bytes typed (text and keys)."),
      keys: z.array(z.string()).optional(),
      signal: z.string().optional().describe("The signal sent to the terminal's foreground process group."),
      resized: z.strictObject({ rows: z.number().int(), cols: z.number().int() }).optional(),
    })
    .describe("What this call did, exactly once."),
  waited: z
    .strictObject({
      until: z.enum(["quiet", "text", "pattern", "exited", "timeout"]),
      waitedMs: z.number().int(),
    })
    .describe("What ended the wait for output: timeout means the text or pattern did not appear in time."),
  output: z.string().describe("Output since the input, escape sequences removed (its end when long)."),
  ...screenFields,
  ...ptyUrlFields,
});
export type InputOutput = z.infer<typeof inputOutput>;

export const terminalInputTool = defineTool({
  id: "terminal_input",
  route: "i",
  longRoutes: ["input", "type"],
  capability: "mutation",
  permission: "terminal",
  description:
    "Type into a pty=1 process (pid=, raw=text, key=enter,ctrl-c, signal=INT, rows=/cols=), once; waits for quiet output, expect= or pattern=.",
  example: "/i?pid=1234&key=enter&raw=print(1)",
  schema,
  output: inputOutput,
  url: { rawField: "text" },
  journal: {
    serialize: false,
    repeatOnStateChange: true,
    defaultWaitMs: (args) => Math.min(MAX_WAIT_MS, waitBoundOf(args as InputArgs) + 1000),
  },
  execute: executeInput,
});

function waitBoundOf(args: InputArgs): number {
  const expecting = args.expect !== undefined || args.pattern !== undefined;
  return args.timeout ?? (expecting ? DEFAULT_EXPECT_TIMEOUT_MS : DEFAULT_QUIET_TIMEOUT_MS);
}

function parseInput(args: InputArgs) {
  if (args.expect !== undefined && args.pattern !== undefined) {
    throw new ToolError(ErrorCode.conflictingParameters, "Wait for expect= or for pattern=, not both.", {
      detail: { parameters: ["expect", "pattern"] },
    });
  }
  if ((args.rows === undefined) !== (args.cols === undefined)) {
    throw new ToolError(ErrorCode.missingParameter, "A resize gives both rows= and cols=.", {
      detail: { parameters: ["rows", "cols"] },
    });
  }
  const keys = (args.key ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
  const keyText = keys.map((name) => {
    const bytes = keyBytes(name);
    if (bytes === undefined)
      throw new ToolError(ErrorCode.invalidParameter, `Unknown key "${name}". Known keys: ${KEY_NAMES.join(", ")}.`, {
        detail: { parameter: "key", value: name },
        retryable: false,
      });
    return bytes;
  });
  const typed = (args.text ?? "") + keyText.join("");
  if (typed === "" && args.signal === undefined && args.rows === undefined) {
    throw new ToolError(
      ErrorCode.missingParameter,
      "Nothing to send: give raw=<text> (last), key=<names>, signal=<name>, or rows= and cols=.",
      { detail: { parameters: ["text", "key", "signal", "rows", "cols"] } },
    );
  }
  let pattern: RegExp | undefined;
  if (args.pattern !== undefined) {
    try {
      pattern = new RegExp(args.pattern, "m");
    } catch (error) {
      throw new ToolError(
        ErrorCode.invalidParameter,
        `pattern= is not a valid regular expression: ${(error as Error).message}.`,
        {
          detail: { parameter: "pattern" },
          retryable: false,
        },
      );
    }
  }
  return { keys, typed, pattern };
}

/** What the call waits for: a text, a pattern tested on the bridge's regex worker, or quiet output (the default). */
function waitUntilOf(args: InputArgs, pattern: RegExp | undefined, ctx: ToolContext): WaitUntil {
  if (args.expect !== undefined) return { text: args.expect };
  if (!pattern) return { quietMs: args.quiet ?? DEFAULT_QUIET_MS };
  const { regex } = runtimeOf(ctx).terminal;
  return {
    pattern: async (text, deadline, signal) => {
      const found = await regex.test(pattern.source, pattern.flags, [text], deadline, signal);
      return Array.isArray(found) ? found[0] === true : found;
    },
  };
}

async function executeInput(args: InputArgs, ctx: ToolContext): Promise<InputOutput> {
  const { typed, keys, pattern } = parseInput(args);
  const until = waitUntilOf(args, pattern, ctx);
  const { ptys } = runtimeOf(ctx).terminal;
  const record = livePty(ptys, args.pid, ctx.session.id);
  const pty = record.process;
  await pty.flush();
  const since = pty.replay.endOffset;
  if (args.rows !== undefined && args.cols !== undefined) pty.resize(args.rows, args.cols);
  if (typed !== "") pty.write(typed);
  const signalled = args.signal ? await pty.signal(`SIG${args.signal}`) : undefined;
  if (args.signal && signalled === undefined) {
    throw new ToolError(
      ErrorCode.processEnded,
      `No process holds PTY ${args.pid}'s terminal any more; no signal was sent.`,
      {
        detail: { pid: args.pid },
        retryable: false,
      },
    );
  }
  const waited = await pty.waitFor(until, since, waitBoundOf(args), ctx.signal);
  await pty.flush();
  const output = stripEscapes(pty.read(since, Number.MAX_SAFE_INTEGER).text);
  return {
    ok: true as const,
    mode: "input" as const,
    ...stateOf(record),
    sent: {
      bytes: Buffer.byteLength(typed, "utf8"),
      ...(keys.length > 0 ? { keys } : {}),
      ...(args.signal ? { signal: `SIG${args.signal}` } : {}),
      ...(args.rows !== undefined && args.cols !== undefined ? { resized: { rows: args.rows, cols: args.cols } } : {}),
    },
    waited,
    output: output.length > OUTPUT_ECHO_CHARS ? `…${output.slice(-OUTPUT_ECHO_CHARS)}` : output,
    ...screenOf(pty.screen(args.lines ?? 0), args.lines !== undefined),
    ...urlsOf(ctx.urls, record.pid, pty.running),
  };
}
