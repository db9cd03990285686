// Test-only hooks, read from the environment once at start-up and inert unless their variable is set.
// They exist so crash tests can hold a commit open long enough to SIGKILL the process in the middle of it.
import { z } from "zod";

/**
 * URLBRIDGE_TEST_PATCH_WRITE_DELAY_MS: apply_patch sleeps this long after each file it commits. Test-only;
 * never set it in production (it only slows patches down, it never changes what they write).
 */
export const PATCH_WRITE_DELAY_ENV = "URLBRIDGE_TEST_PATCH_WRITE_DELAY_MS";
const MAX_TEST_DELAY_MS = 60_000;

export interface TestHooks {
  patchWriteDelayMs: number;
}

export const NO_TEST_HOOKS: TestHooks = { patchWriteDelayMs: 0 };

export function readTestHooks(env: NodeJS.ProcessEnv = process.env): TestHooks {
  const raw = env[PATCH_WRITE_DELAY_ENV];
  if (raw === undefined || raw === "") return NO_TEST_HOOKS;
  const parsed = z.coerce.number().int().min(0).max(MAX_TEST_DELAY_MS).safeParse(raw);
  if (!parsed.success) throw new Error(`${PATCH_WRITE_DELAY_ENV} must be an integer 0..${MAX_TEST_DELAY_MS} (milliseconds)`);
  return { patchWriteDelayMs: parsed.data };
}
