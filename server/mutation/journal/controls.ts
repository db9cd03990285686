// The journal controls every mutation tool accepts (wait, run, call): spread `journalControls` into the
// tool's zod schema; the journal runner strips them before hashing and executing.
import { z } from "zod";

export const MIN_WAIT_MS = 0;
/**
 * The longest a first response (or a /j poll) may wait: long enough that an 8 s test run answers in one GET,
 * far below the tunnel's 100 s edge timeout and URL readers' own (issue 14).
 */
export const MAX_WAIT_MS = 20_000;
/**
 * wait= when omitted. File mutations finish in milliseconds, so 1000 ms lets nearly every first response
 * carry the final result (no extra /j round trip) while staying far below URL readers' own timeouts.
 */
export const DEFAULT_WAIT_MS = 1000;
/**
 * The wait= a poll URL carries for a call that asked `wait` (issue 27 item 4): the caller's own wait, bounded by
 * MAX_WAIT_MS, so a 20 s test run costs one poll, not twenty. wait=0 asks the first answer not to wait; its poll
 * waits DEFAULT_WAIT_MS (a poll that never waits would only spin).
 */
export function pollWaitOf(wait: number | undefined): number {
  if (wait === undefined || !Number.isFinite(wait) || wait <= 0) return DEFAULT_WAIT_MS;
  return Math.min(Math.trunc(wait), MAX_WAIT_MS);
}

export const RUN_NONCE_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;
/**
 * run=@changed: run again only when the project changed since the recorded run. Its nonce is the project's state
 * epoch (journal-runner.ts), so a hidden retry in the same epoch still finds the same intent. `@` is outside
 * RUN_NONCE_PATTERN, so no nonce an agent chose before means this.
 */
export const RUN_WHEN_CHANGED = "@changed";
export const CALL_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export const journalControls = {
  wait: z.number().int().min(MIN_WAIT_MS).max(MAX_WAIT_MS).optional(),
  run: z
    .string()
    .refine(
      (v) => v === RUN_WHEN_CHANGED || RUN_NONCE_PATTERN.test(v),
      "run must match ^[A-Za-z0-9._:-]{1,64}$, or be @changed",
    )
    .optional(),
  call: z.string().regex(CALL_ID_PATTERN, "call must match ^[A-Za-z0-9._:-]{1,128}$").optional(),
};

export const JOURNAL_CONTROL_NAMES = Object.keys(journalControls) as Array<keyof typeof journalControls>;

export interface JournalControls {
  wait: number;
  run: string | undefined;
  call: string | undefined;
}

/** Splits bound arguments into the journal controls and the tool's semantic arguments. */
export function splitControls(args: Record<string, unknown>): {
  controls: JournalControls;
  rest: Record<string, unknown>;
} {
  const { wait, run, call, ...rest } = args;
  return {
    controls: {
      wait: typeof wait === "number" ? wait : DEFAULT_WAIT_MS,
      run: typeof run === "string" ? run : undefined,
      call: typeof call === "string" ? call : undefined,
    },
    rest,
  };
}
