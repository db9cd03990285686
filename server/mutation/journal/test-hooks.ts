// Test-only hooks, read from the environment once at start-up and inert unless their variable is set.
// They exist so crash tests can hold a commit open long enough to SIGKILL the process in the middle of it.
import { z } from "zod";

/**
 * URLBRIDGE_TEST_PATCH_WRITE_DELAY_MS: apply_patch sleeps this long after each file it switches into place (renamed
 * over its target or unlinked, apply-patch/phases.ts). Test-only; never set it in production (it only slows
 * patches down, it never changes what they write).
 */
export const PATCH_WRITE_DELAY_ENV = "URLBRIDGE_TEST_PATCH_WRITE_DELAY_MS";
/**
 * URLBRIDGE_TEST_DIRECTORY_SYNC_DELAY_MS: a write or edit reports its directory fsync done this long after it is,
 * so its outcome sits recorded but unconfirmed, the file renamed, while a crash test kills the process. Test-only; it only delays answers, it never changes what is written or recorded.
 */
export const DIRECTORY_SYNC_DELAY_ENV = "URLBRIDGE_TEST_DIRECTORY_SYNC_DELAY_MS";
/**
 * URLBRIDGE_TEST_RENAME_DELAY_MS: a write or edit holds its rename this long once its outcome, recorded ahead of it
 * (journal.ts recordAhead), and its temp file are durable, so a crash test can kill the process before the file
 * changes. Test-only; it only delays answers, it never changes what is written or recorded.
 */
export const RENAME_DELAY_ENV = "URLBRIDGE_TEST_RENAME_DELAY_MS";
/**
 * URLBRIDGE_TEST_PATCH_SWITCH_DELAY_MS: apply_patch waits this long once every temp file of the patch is written and
 * fsynced, before the first rename (apply-patch/phases.ts), so a crash test can kill the process between staging and
 * switch, and a race test can change the tree there. Test-only; it only delays answers, it never changes what is written.
 */
export const PATCH_SWITCH_DELAY_ENV = "URLBRIDGE_TEST_PATCH_SWITCH_DELAY_MS";
const MAX_TEST_DELAY_MS = 60_000;

export interface TestHooks {
  patchWriteDelayMs: number;
  directorySyncDelayMs: number;
  renameDelayMs: number;
  patchSwitchDelayMs: number;
}

export const NO_TEST_HOOKS: TestHooks = {
  patchWriteDelayMs: 0,
  directorySyncDelayMs: 0,
  renameDelayMs: 0,
  patchSwitchDelayMs: 0,
};

function readDelay(env: NodeJS.ProcessEnv, name: string): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return 0;
  const parsed = z.coerce.number().int().min(0).max(MAX_TEST_DELAY_MS).safeParse(raw);
  if (!parsed.success) throw new Error(`${name} must be an integer 0..${MAX_TEST_DELAY_MS} (milliseconds)`);
  return parsed.data;
}

export function readTestHooks(env: NodeJS.ProcessEnv = process.env): TestHooks {
  const patchWriteDelayMs = readDelay(env, PATCH_WRITE_DELAY_ENV);
  const directorySyncDelayMs = readDelay(env, DIRECTORY_SYNC_DELAY_ENV);
  const renameDelayMs = readDelay(env, RENAME_DELAY_ENV);
  const patchSwitchDelayMs = readDelay(env, PATCH_SWITCH_DELAY_ENV);
  if (patchWriteDelayMs === 0 && directorySyncDelayMs === 0 && renameDelayMs === 0 && patchSwitchDelayMs === 0)
    return NO_TEST_HOOKS;
  return { patchWriteDelayMs, directorySyncDelayMs, renameDelayMs, patchSwitchDelayMs };
}
