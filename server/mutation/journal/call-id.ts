// Canonical call identity of a mutation: `auto:<tool>:<hex>` over the tool id, the canonical (recursively
// key-sorted) arguments and the optional run= nonce, so a replayed GET maps to the intent it already created.
import { createHash } from "node:crypto";

/** Hex digits of SHA-256 kept in an auto call id: 64 bits, ample within one session generation's journal. */
export const CALL_ID_HEX_CHARS = 16;

/** JSON with object keys sorted at every depth and undefined members dropped: equal arguments, equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortDeep(value));
}

function sortDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortDeep(v)));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key];
      if (member !== undefined) out[key] = sortDeep(member);
    }
    return out;
  }
  return value;
}

/** Digest of a tool's semantic arguments (controls already removed), stored to detect call= reuse. */
export function hashArguments(tool: string, args: Record<string, unknown>): string {
  return createHash("sha256").update(canonicalJson({ tool, args })).digest("hex");
}

export interface CallIdentityInput {
  tool: string;
  /** Semantic arguments without the journal controls. */
  args: Record<string, unknown>;
  run?: string | undefined;
  call?: string | undefined;
}

/** The explicit call= when given, else the deterministic auto id. */
export function computeCallId(input: CallIdentityInput): string {
  if (input.call !== undefined) return input.call;
  const digest = createHash("sha256")
    .update(canonicalJson({ tool: input.tool, args: input.args, run: input.run ?? null }))
    .digest("hex")
    .slice(0, CALL_ID_HEX_CHARS);
  return `auto:${input.tool}:${digest}`;
}

/**
 * A run= nonce derived from a call id and a purpose ("retry", "repeat@<epoch>"). Deterministic, so two
 * hidden replays that both receive a retry/repeat URL receive the same one and still collapse to one intent.
 */
export function deriveRunNonce(callId: string, purpose: string): string {
  return `r${createHash("sha256").update(`${callId}\n${purpose}`).digest("hex").slice(0, 10)}`;
}
