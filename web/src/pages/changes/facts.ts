// How the Changes page words a change: its kind, a side's size and fingerprint, and a file's line counts.
import type { ChangesOutput } from "../../api/types";

export type ChangedFile = NonNullable<ChangesOutput["files"]>[number];
export type ChangeIntent = NonNullable<ChangesOutput["intents"]>[number];
export type ChangeKind = ChangedFile["change"];
export type SideFacts = NonNullable<ChangedFile["before"]>;

/** The operator's word for each change kind (the "created, changed, moved, deleted"). */
export const KIND_LABELS: Record<ChangeKind, string> = {
  created: "created",
  modified: "changed",
  deleted: "deleted",
  moved_from: "moved away",
  moved_to: "moved here",
  unchanged: "unchanged",
};

/** Digits of a fingerprint shown inline; the whole one is in the title. */
const SHORT_FINGERPRINT = 12;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

export function shortFingerprint(side: SideFacts): string {
  return side.fingerprint.slice(0, SHORT_FINGERPRINT);
}

/** "1.2 KiB, sha256 0a1b2c3d4e5f" or "absent". */
export function describeSide(side: SideFacts | undefined): string {
  return side ? `${formatBytes(side.size)}, sha256 ${shortFingerprint(side)}` : "absent";
}

/** A file is shown by size and hash when it has no text diff: binary, or its contents dropped past the budget. */
export function isOpaque(file: ChangedFile): boolean {
  return file.binary === true || file.detailDropped === true;
}
