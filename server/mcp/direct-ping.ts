// ping on the direct path (issue 34 build 4): a plain ping is answered here, in the bytes the SDK's dispatch
// answers (its ping handler's empty result, serialised as its Protocol sends a response), without taking a pooled
// server and connecting it to an exchange. Anything else about the message (params with content, a batch, an
// id the SDK's schema refuses) stays with the SDK, which words those answers.
// test/integration/mcp/http-direct-call.test.ts compares both paths' bytes.
import type { RpcId } from "./direct-call.js";

const PING_KEYS = new Set(["jsonrpc", "id", "method", "params"]);

/** The answer to `value` when it is a plain ping (no params, or empty ones), else undefined. */
export function directPingAnswer(value: unknown): string | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== "2.0" || message.method !== "ping") return undefined;
  if (!Object.keys(message).every((key) => PING_KEYS.has(key))) return undefined;
  const { id, params } = message;
  if (!(typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)))) return undefined;
  if (params !== undefined && !isEmptyObject(params)) return undefined;
  return JSON.stringify({ result: {}, jsonrpc: "2.0", id: id as RpcId });
}

function isEmptyObject(value: unknown): boolean {
  return value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0;
}
