// The MCP endpoint's request size limit, shared by its two transports (HTTP: http.ts; the stdio socket:
// socket-connection.ts) and the stdio relay, which refuses a larger line itself before it reaches the socket.

/**
 * The largest request body the endpoint reads (1 MiB). A JSON-RPC message is a tool call, and every tool's
 * content (write, patch) fits far below this; a larger body is refused with a JSON-RPC error, never buffered.
 */
export const MCP_MAX_BODY_BYTES = 1024 * 1024;

/** The refusal of a larger one (JSON-RPC code -32000), the same words on both transports. */
export const tooLargeMessage = `The request body is larger than ${MCP_MAX_BODY_BYTES} bytes (1 MiB), the most this endpoint reads. Split the content over several smaller calls (write part of a file, then add the rest with edit or patch).`;
