// Message ids in OpenCode's ascending format (msg_ + 12 hex of ms*4096+counter + 14 base62), chosen by us so a
// worker's identity (session + user message) is known before the prompt is sent and can be read back exactly.
import { randomInt } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
let lastMs = 0;
let counter = 0;

export function ascendingMessageId(now: number = Date.now()): string {
  // Never step back: a clock that moves backwards keeps counting on the last millisecond.
  if (now > lastMs) {
    lastMs = now;
    counter = 0;
  }
  counter += 1;
  const value = BigInt(lastMs) * 0x1000n + BigInt(counter);
  const hex = value.toString(16).padStart(12, "0").slice(-12);
  let tail = "";
  for (let i = 0; i < 14; i++) tail += BASE62[randomInt(62)];
  return `msg_${hex}${tail}`;
}
