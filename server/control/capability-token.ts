// Capability tokens: 8 base62 characters (~47.6 bits) from crypto random bytes, without modulo bias.
import { randomBytes } from "node:crypto";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** Largest multiple of 62 that fits in a byte; bytes at or above it are discarded (rejection sampling). */
const UNBIASED_LIMIT = 248;

export const CAPABILITY_TOKEN_LENGTH = 8;

export function generateCapabilityToken(length = CAPABILITY_TOKEN_LENGTH): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte >= UNBIASED_LIMIT) continue;
      out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Short random identifiers for projects and sessions (not secrets). */
export function generateId(prefix: string): string {
  return `${prefix}_${generateCapabilityToken(10)}`;
}
