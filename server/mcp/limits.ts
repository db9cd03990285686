// The MCP endpoint's request size limit, shared by its two transports (HTTP: http.ts; the stdio socket:
// socket-connection.ts) and the stdio relay, which refuses a larger line itself before it reaches the socket; and
// the socket's bound on concurrent requests per connection.

/**
 * The largest request body the endpoint reads (1 MiB). A JSON-RPC message is a tool call, and every tool's
 * content (write, patch) fits far below this; a larger body is refused with a JSON-RPC error, never buffered.
 */
export const MCP_MAX_BODY_BYTES = 1024 * 1024;

/** The refusal of a larger one (JSON-RPC code -32000), the same words on both transports. */
export const tooLargeMessage = `The request body is larger than ${MCP_MAX_BODY_BYTES} bytes (1 MiB), the most this endpoint reads. Split the content over several smaller calls (write part of a file, then add the rest with edit or patch).`;

/**
 * Requests one MCP socket connection (server/mcp/socket-connection.ts) has in the bridge at once: past it the bridge
 * stops reading that connection until one is answered (a cancelled call counts until its handler returns). The
 * stdio relay sends at most as many lines at once (MAX_IN_FLIGHT, server/cli/mcp-relay.ts), so it meets this bound
 * only with batches; any other local client holding a capability meets it too.
 */
export const MCP_SOCKET_MAX_IN_FLIGHT = 16;

/**
 * The most messages in one JSON-RPC batch (the SDK's HTTP transport's MAX_BATCH_SIZE): a larger one is refused whole,
 * over HTTP (legacy-exchange.ts) and on a 2025-era socket connection alike, whose answers would otherwise be held
 * until the last came. The stdio relay sends a larger batch over HTTP, so its client gets HTTP's answers.
 */
export const MCP_MAX_BATCH_SIZE = 100;
/** The refusal's words, as the SDK's transport has them. */
export const batchTooLargeMessage = `Invalid Request: Batch must not exceed ${MCP_MAX_BATCH_SIZE} messages`;
