// Commit and crash recovery for mutations of one file (write, edit): a fingerprint checkpoint, then one
// atomic rename. After a crash the file holds either the old bytes or the new, and recovery says which.
import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCode, isToolError, ToolError, type ToolFailure } from "../../errors.js";
import { fingerprintBytes, readCoverage, sha256HexAsync } from "../../kernel/read/read-coverage.js";
import type { InterruptedIntent, ToolContext, ToolResult } from "../../kernel/tool/definition.js";
import { readHeldFile, removeStaleTempFilesIn } from "../../sandbox/fd-ops.js";
import { walkInsideRoot, type HeldPath } from "../../sandbox/fd-walk.js";
import { resolveInsideRoot } from "../../sandbox/paths.js";
import { toDisplayPath } from "../../sandbox/paths.js";
import { writeHeldFile, type HeldWriteResult } from "./atomic-write.js";
import { intentOf, runtimeOf, type IntentHandle } from "../journal/context.js";
import type { TestHooks } from "../journal/test-hooks.js";
import { loopIsSaturated } from "../journal/inline-sync.js";
import type { RecoveredOutput } from "../journal/envelope.js";
import { interruptedFailure } from "../journal/recovery.js";

interface SingleFileCheckpoint {
  path: string;
  /** Fingerprint before the write, or null when the file did not exist. */
  before: string | null;
  after: string;
}

export interface SingleFileWrite {
  /** The target as the tool's containment walk holds it; written inside its checked directory. */
  target: HeldPath;
  bytes: Buffer;
  /** Mode of the replaced file; omitted for a new file. */
  mode?: number;
  previous: Buffer | undefined;
  /** The whole SHA-256s of previous and bytes, when already computed off the event loop (the edit worker). */
  hashes?: { before: string; after: string };
}

/**
 * JournalBehaviour.lane of a tool that rewrites one file: the file's canonical path when it exists, so edits of
 * different files of a project run side by side; undefined (the intent runs alone) for a file still to be created,
 * whose folders may have to be made.
 */
export function existingFileLane(args: Record<string, unknown>, ctx: ToolContext): string | undefined {
  if (typeof args.path !== "string") return undefined;
  const target = resolveInsideRoot(ctx.project.root, args.path, { allowMissing: true });
  return target.exists ? target.absolute : undefined;
}

/**
 * A laned intent must hold the very file its lane names, existing: a link on the way swapped (or the file removed)
 * since admission would otherwise let it run beside another intent rewriting the same file. The retry runs anew.
 */
export function checkLane(ctx: ToolContext, target: HeldPath): void {
  const lane = ctx.intent?.lane;
  if (lane === undefined || (lane === target.absolute && target.exists)) return;
  throw new ToolError(
    ErrorCode.pathChanged,
    `${target.display} changed while this call waited its turn (a link on the way was replaced, or the file was removed or created). Nothing was written; fetch the same URL again.`,
    { detail: { path: target.display }, retryable: true, agentAction: "wait_and_retry" },
  );
}

/**
 * Records the before/after fingerprints and the tool's answer (marked unconfirmed) in one commit, then writes
 * atomically: the rename waits for that commit to be durable, which the temp file's fsync overlaps. Returns once
 * the file is renamed into place; the directory's fsync is handed to the journal (lastSyncAfterRecord), which
 * answers once it is done. `answer` is what the tool returns on success, so it must be complete before the
 * rename; a failure from here on replaces it in the record. The tools using it declare
 * journal.awaitsDurableItself and journal.confirm (confirmSingleFile).
 */
export async function commitSingleFile(ctx: ToolContext, write: SingleFileWrite, answer: ToolResult): Promise<void> {
  // Whole SHA-256s, in the thread pool for large files: the fingerprints are their first 32 digits, and the
  // review record keys the contents by them (so it does not hash 10 MB on the event loop again).
  const [beforeHash, afterHash] = write.hashes
    ? [write.previous ? write.hashes.before : undefined, write.hashes.after]
    : await Promise.all([write.previous ? sha256HexAsync(write.previous) : undefined, sha256HexAsync(write.bytes)]);
  const before = beforeHash?.slice(0, 32) ?? null;
  const after = afterHash.slice(0, 32);
  const checkpoint: SingleFileCheckpoint = { path: write.target.absolute, before, after };
  const intent = intentOf(ctx);
  // For review and revert (server/review/): the file before and after, applied once the intent succeeds.
  const { hooks, journal, terminal, store } = runtimeOf(ctx);
  // Large contents are staged ahead, a sealed chunk a turn, so the record's transaction below stores no megabytes.
  const changes = await store.changes.stageAhead([
    {
      path: write.target.absolute,
      ...(write.previous ? { before: { mode: write.mode ?? 0o644, content: write.previous, hash: beforeHash! } } : {}),
      after: { ...(write.mode === undefined ? {} : { mode: write.mode }), content: write.bytes, hash: afterHash },
    },
  ]);
  try {
    intent.recordChanges(changes);
  } catch (error) {
    store.changes.discardStaged(changes);
    throw error;
  }
  const landed = intent.checkpointWithOutcome(checkpoint, answer);
  const { target } = write;
  // The session's project growth budget (growth-budget.ts): refused before anything is written.
  const growth = write.bytes.length - (write.previous?.length ?? 0);
  terminal.growth.admitWrite(ctx.session.id, growth);
  // On a saturated loop every thread-pool trip would cost a long event-loop turn, two of them while holding the
  // project's write queue: then the journal and the file are synced inline.
  const inline = loopIsSaturated(journal.inFlight);
  let written: HeldWriteResult;
  try {
    if (inline) intent.durableNow();
    written = await writeHeldFile(target, write.bytes, {
      ...(write.mode === undefined ? {} : { mode: write.mode }),
      ...(ctx.project.agentFallback ? { agentFallback: ctx.project.agentFallback } : {}),
      // The checkpoint and the outcome (and the intent's admission) reach stable storage while the temp file is fsynced.
      ...(inline ? { inline } : { journaled: journaledBeforeRename(intent, hooks), deferDirectorySync: true }),
    });
  } catch (error) {
    // The rename never happened: the journal records the failure over the success and takes back its epoch bump.
    if (isToolError(error)) throw error;
    throw writeFailed(ctx, target.display, error);
  }
  landed();
  terminal.growth.recordWrite(ctx.session.id, growth);
  readCoverage.of(ctx.state).invalidate(target.absolute);
  intent.lastSyncAfterRecord(
    written.directorySynced.then(
      // Test-only (URLBRIDGE_TEST_DIRECTORY_SYNC_DELAY_MS): holds the answer back, the file renamed, so a crash test can kill us there.
      async () => {
        if (hooks.directorySyncDelayMs > 0) await sleep(hooks.directorySyncDelayMs);
        return undefined;
      },
      (error: unknown) => notDurable(target.display, error).toFailure(),
    ),
  );
}

/** What the rename waits for: the journal's fsync, then (test-only, URLBRIDGE_TEST_RENAME_DELAY_MS) a hold before the file changes. */
function journaledBeforeRename(intent: IntentHandle, hooks: TestHooks): () => Promise<void> {
  if (hooks.renameDelayMs === 0) return () => intent.durable();
  return () => intent.durable().then(() => sleep(hooks.renameDelayMs));
}

function writeFailed(ctx: ToolContext, display: string, error: unknown): ToolError {
  const cause = (error as NodeJS.ErrnoException).code ?? "error";
  // What the permission check could not foresee (an ACL, a security module): the kernel's own refusal, same code.
  if (cause === "EACCES" || cause === "EPERM")
    return new ToolError(
      ErrorCode.permissionDenied,
      `Permission denied: the file system refused to write ${display} (${cause}); the agent's terminal is refused the same way. Nothing was written. To fix it, the operator gives the agent's user write access there. Then fetch retry.`,
      {
        detail: { path: display, reason: "kernel", cause },
        retryable: false,
        agentAction: "stop",
        extra: retryExtra(ctx),
      },
    );
  // The temp file is removed on failure and the rename never happened: the target is as it was.
  return new ToolError(
    ErrorCode.writeFailed,
    `The file system refused to write ${display} (${cause}); the file is unchanged. Fix the cause (permissions, space, a file where a directory is needed), then fetch retry.`,
    {
      detail: { path: display, cause },
      retryable: true,
      extra: retryExtra(ctx),
    },
  );
}

/**
 * The rename happened but its directory's fsync failed: the new content is what every reader sees now, yet a
 * power loss could still bring the old file back. Not "unchanged", and a retry would apply the change again.
 */
function notDurable(display: string, error: unknown): ToolError {
  const cause = (error as NodeJS.ErrnoException).code ?? "error";
  return new ToolError(
    ErrorCode.writeFailed,
    `${display} now holds the new content, but the file system refused to make its folder durable (${cause}): a power loss could still bring back the old file. Read the file before changing it again; the operator should check the disk.`,
    { detail: { path: display, cause, replaced: true } },
  );
}

function retryExtra(ctx: ToolContext): Record<string, unknown> {
  const retry = intentOf(ctx).retryUrl();
  return retry ? { retry } : {};
}

/**
 * journal.recover for write and edit: a single rename either happened or not, so the file's fingerprint
 * decides. New content on disk: succeeded (recovered). Old content or no checkpoint: `interrupted`, not applied.
 * Anything else (changed by someone else since): `interrupted`, applied unknown.
 */
export async function recoverSingleFile(intent: InterruptedIntent): Promise<RecoveredOutput | ToolFailure> {
  const checkpoint = intent.checkpoint as SingleFileCheckpoint | undefined;
  if (intent.phase === "pending" || !checkpoint) return interruptedFailure(intent, intent.phase, { applied: false });
  const { display, current } = await currentFingerprint(intent.projectRoot, checkpoint);
  if (current === checkpoint.after) {
    return {
      ok: true,
      path: display,
      recovered: true,
      hint: "The bridge restarted right after this write landed; the file holds the new content.",
    };
  }
  return notOnDisk(intent, checkpoint, display, current);
}

/**
 * journal.confirm for write and edit: a success recorded ahead of the rename (journal.ts recordAhead), never
 * confirmed because the process stopped before it answered. The file holding the new content confirms it (the
 * recorded answer stands). The old content means the rename never happened or did not survive a power loss:
 * recorded as `interrupted`, not applied. Anything else (changed since): `interrupted`, applied unknown; never a
 * success for content that is not on disk.
 */
export async function confirmSingleFile(intent: InterruptedIntent): Promise<ToolFailure | undefined> {
  const checkpoint = intent.checkpoint as SingleFileCheckpoint | undefined;
  if (!checkpoint) return undefined;
  const { display, current } = await currentFingerprint(intent.projectRoot, checkpoint);
  if (current === checkpoint.after) return undefined;
  return notOnDisk(intent, checkpoint, display, current);
}

/** The failure for a checkpointed change the file does not hold: the old content means not applied, else unknown. */
function notOnDisk(
  intent: InterruptedIntent,
  checkpoint: SingleFileCheckpoint,
  display: string,
  current: string | null,
): ToolFailure {
  return interruptedFailure(intent, "running", {
    applied: current === checkpoint.before ? false : "unknown",
    path: display,
  });
}

/** The fingerprint of the checkpointed file now (null when absent), after removing temp files a crash left beside it. */
async function currentFingerprint(
  projectRoot: string,
  checkpoint: SingleFileCheckpoint,
): Promise<{ display: string; current: string | null }> {
  const display = toDisplayPath(projectRoot, checkpoint.path);
  let current: string | null = null;
  // The recorded path is canonical: walked again from the root, refusing any symlink now on the way.
  const target = walkInsideRoot(projectRoot, display, { symlinks: "refuse" });
  try {
    if (target.pending.length <= 1) await removeStaleTempFilesIn(target.dirFd, target.name);
    if (target.exists && target.stats?.isFile())
      current = fingerprintBytes(await readHeldFile(target.fd!, target.stats.size));
  } finally {
    target.close();
  }
  return { display, current };
}
