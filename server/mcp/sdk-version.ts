// The @modelcontextprotocol/server version whose private behaviour the MCP edge reproduces or wraps: the direct
// tools/call path (direct-call.ts and its HTTP and socket adapters), the pooled one-exchange transport
// (legacy-exchange.ts) and the -32602 wrapper over its stored request handlers (invalid-params.ts).
// test/unit/mcp/sdk-version.test.ts fails when the installed SDK is another version: then re-run the byte
// comparisons (legacy-exchange, http-direct-call, socket-direct-call, protocol-hygiene tests) and update this.
export const VERIFIED_MCP_SDK_VERSION = "2.4.0";
