// What /x answers when it succeeds, by mode (foreground, background, stop, pty): the zod shapes both transports
// render and the output-schema tests check. Container mode answers the same shapes.
import { z } from "zod";
import { ptyStartOutput } from "./pty/pty-launch.js";

/** Present beside a stream only when its output was cut: the notice inside the text says where. */
const truncation = z
  .strictObject({
    bytes: z.number().int().describe("Bytes the stream produced in total."),
    omittedBytes: z.number().int().describe("Bytes left out between the kept head and tail."),
  })
  .optional()
  .describe("Present when the output was cut; redirect it to a file and read that with /r for all of it.");

const cwdField = z.string().describe("Where the command ran: /project or a folder below it.");

/** A foreground run that finished by itself: a non-zero exit is a result, not an error. */
export const foregroundOutput = z.strictObject({
  ok: z.literal(true),
  mode: z.literal("foreground"),
  exitCode: z.number().int().nullable().describe("The shell's exit status; null when a signal ended it (see signal)."),
  signal: z.string().optional().describe("The signal that ended the shell (e.g. SIGKILL), when one did."),
  durationMs: z.number().int(),
  cwd: cwdField,
  stdout: z
    .string()
    .describe("Standard output as UTF-8; when long, its head and tail around a one-line omission notice."),
  stdoutTruncated: truncation,
  stderr: z.string().describe("Standard error, bounded like stdout."),
  stderrTruncated: truncation,
  leftoversKilled: z
    .number()
    .int()
    .optional()
    .describe("Processes the command left running after its shell exited, which were ended; start servers with bg=1."),
  checkpointNotice: z.string().optional().describe("What the change set could not record of this command's changes."),
});
export type ForegroundOutput = z.infer<typeof foregroundOutput>;

/** A bg=1 launch whose start-up window closed with the process alive, or after it exited with status 0. */
export const backgroundOutput = z.strictObject({
  ok: z.literal(true),
  mode: z.literal("background"),
  pid: z
    .number()
    .int()
    .describe(
      "The process tree's id: stop it with the `stop` URL (/x?stop=<pid>). In container mode a bridge handle, not a host pid.",
    ),
  processState: z
    .enum(["running", "exited"])
    .describe(
      "running: alive when the start-up window closed (stop is present); exited: finished with status 0 during start-up.",
    ),
  exitCode: z
    .number()
    .int()
    .nullable()
    .optional()
    .describe(
      "processState exited only: the exit status (always 0 here; a failed start-up is background_start_failed).",
    ),
  signal: z
    .string()
    .optional()
    .describe(
      "processState exited only, when a signal ended it (never in a success: that is background_start_failed).",
    ),
  startup: z
    .enum(["exited", "announced", "window"])
    .describe(
      "What closed the start-up window: the process exited, it announced an address and went quiet, or the window elapsed.",
    ),
  startupMs: z.number().int(),
  cwd: cwdField,
  detectedUrls: z.array(z.string()).describe("Local URLs the start-up output announced (http://localhost:5173/...)."),
  detectedPorts: z.array(z.number().int()).describe("Local ports the start-up output announced."),
  transcript: z
    .string()
    .describe("stdout and stderr of the start-up window, interleaved as they arrived; bounded like stdout."),
  transcriptTruncated: truncation,
  logFile: z
    .string()
    .describe(
      "Where the rest of the output goes (rotated, bounded): read it with /x?raw=tail+<logFile>. In container mode a path inside the project's container.",
    ),
  stop: z.string().optional().describe("processState running only: exact URL that ends the whole process tree."),
});
export type BackgroundOutput = z.infer<typeof backgroundOutput>;

/** /x?stop=<pid>: one of this session's bg=1 trees was ended. */
export const stopOutput = z.strictObject({
  ok: z.literal(true),
  mode: z.literal("stop"),
  pid: z.number().int(),
  stopped: z.literal(true),
  command: z.string().describe("The stopped process's command (its first 200 characters)."),
  durationMs: z.number().int().describe("How long ending the tree took."),
});
export type StopOutput = z.infer<typeof stopOutput>;

/** What a successful /x answers (before the journal's callId and state), by mode; container mode answers the same shapes. */
export const terminalOutput = z.discriminatedUnion("mode", [
  foregroundOutput,
  backgroundOutput,
  stopOutput,
  ptyStartOutput,
]);
export type TerminalOutput = z.infer<typeof terminalOutput>;
