// tools/call and ping on the 2025-era HTTP leg without the SDK's per-message dispatch: a stateless POST that
// direct-call.ts admits is answered there, in the bytes the pooled exchange (legacy-exchange.ts, and before it the
// SDK's stateless JSON transport) answers; everything else stays on that exchange.
// test/integration/mcp/legacy-exchange.test.ts compares the three.
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import type { DirectCall, DirectTools } from "./direct-call.js";
import { directPingAnswer } from "./direct-ping.js";

/**
 * The call a 2025-era POST's parsed body is, when the direct path answers it: one plain tools/call (a batch never
 * is), sent with no MCP-Protocol-Version header or one the exchange serves (an unsupported one is the exchange's
 * 400, as it is the SDK transport's, so it goes there). A pooled server has seen no initialize, and neither has
 * this path: both answer as a server whose era is unset, the 2025 one.
 */
export function admitHttpCall(
  tools: DirectTools,
  body: unknown,
  protocolVersion: string | undefined,
): DirectCall | undefined {
  if (protocolVersion !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) return undefined;
  return tools.admit(body);
}

/** The answer to a 2025-era POST that is one plain ping, under the same header rule as admitHttpCall. */
export function admitHttpPing(body: unknown, protocolVersion: string | undefined): string | undefined {
  if (protocolVersion !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) return undefined;
  return directPingAnswer(body);
}
