// tools/call on the MCP socket without the SDK's per-message dispatch, answering the bytes the SDK's path would:
// the SDK still serves every other line (socket-connection.ts hands each authenticated line here first).
import type { CallToolResult } from "@modelcontextprotocol/server";
import { callTool, kernelToolsOf, registeredTools, type McpDeps, type McpScope, type RegisteredTool } from "./server.js";

type RpcId = string | number;

/** The first protocol revision of the 2026 era (the SDK's FIRST_MODERN_PROTOCOL_VERSION): its results differ. */
const FIRST_MODERN_REVISION = "2026-07-28";
const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const PARAMS_KEYS = new Set(["name", "arguments"]);

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
const onlyKeys = (value: Record<string, unknown>, allowed: Set<string>) => Object.keys(value).every((key) => allowed.has(key));

/** Whether a JSON value is a tools/call request the SDK's schemas accept with nothing beyond name and arguments. */
function plainToolCall(value: unknown): { id: RpcId; name: string; args: Record<string, unknown> | undefined } | undefined {
  if (!isPlainObject(value) || value.jsonrpc !== "2.0" || value.method !== "tools/call" || !onlyKeys(value, REQUEST_KEYS)) return undefined;
  const { id, params } = value;
  if (!(typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)))) return undefined;
  if (!isPlainObject(params) || typeof params.name !== "string" || !onlyKeys(params, PARAMS_KEYS)) return undefined;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
  return { id, name: params.name, args: params.arguments as Record<string, unknown> | undefined };
}

/** How the SDK words a standard-schema issue (its formatIssue). */
function issueText(issue: { message: string; path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> | undefined }): string {
  if (!issue.path?.length) return issue.message;
  return `${issue.path.map((p) => String(typeof p === "object" ? p.key : p)).join(".")}: ${issue.message}`;
}

/** The SDK's tool-error result (McpServer.createToolError). */
const toolError = (text: string): CallToolResult => ({ content: [{ type: "text", text }], isError: true });

/**
 * Once a connection is pinned to a 2025-era revision (its initialize answered with one), a plain tools/call (jsonrpc,
 * id, method, params of name and arguments only, no _meta) whose tool is listed and whose arguments pass the tool's
 * input schema is answered here: the same input schema, the same runner (server.ts callTool), the SDK's own check of
 * structuredContent against the published outputSchema and its failure wording, the same envelope. Skipped per
 * call: the SDK's JSON-RPC type guards and envelope parse, two parses of the request against CallToolRequestSchema,
 * its context and abort controller, and the re-parse of the result against CallToolResultSchema (a copy of the same
 * keys: our results carry only content, structuredContent and isError). Every other line (other methods, _meta, an
 * unknown tool, arguments the schema refuses, the 2026 era) goes to the SDK. test/integration/mcp/
 * socket-direct-call.test.ts compares the bytes of both paths.
 */
export class DirectCalls {
  private readonly tools: Map<string, RegisteredTool>;
  private initializeIds = new Set<RpcId>();
  private legacy = false;
  private readonly cancelled = new Set<RpcId>();
  private readonly inflight = new Set<RpcId>();

  /** `scope`: the one the connection's server was built for (its tool listing; every call brings its own). */
  constructor(
    private readonly deps: McpDeps,
    scope: McpScope,
  ) {
    this.tools = new Map(registeredTools(deps, scope).map((tool) => [tool.spec.name, tool]));
  }

  /** An initialize request on its way to the SDK: its answer tells the era. */
  sawInitialize(id: RpcId): void {
    this.initializeIds.add(id);
  }

  /** Every message the SDK answers passes here; an initialize answered with a 2025-era revision pins the connection. */
  sawAnswer(message: { id?: unknown; result?: unknown }): void {
    if (this.initializeIds.size === 0 || (typeof message.id !== "string" && typeof message.id !== "number")) return;
    if (!this.initializeIds.delete(message.id)) return;
    const version = isPlainObject(message.result) ? message.result.protocolVersion : undefined;
    if (typeof version === "string" && version < FIRST_MODERN_REVISION) this.legacy = true;
  }

  /** A notifications/cancelled for `id`: an answer not yet written is dropped, as the SDK drops it. */
  cancel(id: RpcId): void {
    if (this.inflight.has(id)) this.cancelled.add(id);
  }

  /**
   * Takes `value` when it is a plain tools/call this class answers as the SDK would: the answer line comes through
   * `write` (never when cancelled first). false: nothing ran; the caller hands the message to the SDK.
   */
  take(value: unknown, scope: McpScope, write: (line: string) => Promise<void>): boolean {
    if (!this.legacy) return false;
    const call = plainToolCall(value);
    if (!call || this.inflight.has(call.id)) return false;
    const tool = this.tools.get(call.name);
    if (!tool) return false;
    const parsed = tool.spec.input.safeParse(call.args ?? {});
    if (!parsed.success) return false;
    this.inflight.add(call.id);
    void this.answer(tool, parsed.data as Record<string, unknown>, scope)
      .then((result) => {
        if (this.cancelled.has(call.id)) return;
        return write(`${JSON.stringify({ result, jsonrpc: "2.0", id: call.id })}\n`);
      })
      .catch((error: unknown) => this.deps.log.debug("MCP socket direct call", { error: error instanceof Error ? error.message : String(error) }))
      .finally(() => {
        this.inflight.delete(call.id);
        this.cancelled.delete(call.id);
      });
    return true;
  }

  /** What the SDK's tools/call handler answers for this call: the handler's result, checked against outputSchema. */
  private async answer(tool: RegisteredTool, args: Record<string, unknown>, scope: McpScope): Promise<CallToolResult> {
    const name = tool.spec.name;
    try {
      const result = await callTool(this.deps, scope, kernelToolsOf(this.deps), tool.spec, args, undefined);
      if (result.isError) return result;
      if (result.structuredContent === undefined) return toolError(`Output validation error: Tool ${name} has an output schema but no structured content was provided`);
      const checked = await tool.outputSchema["~standard"].validate(result.structuredContent);
      if (checked.issues && checked.issues.length > 0) return toolError(`Output validation error: Invalid structured content for tool ${name}: ${checked.issues.map(issueText).join(", ")}`);
      return result;
    } catch (error) {
      return toolError(error instanceof Error ? error.message : String(error));
    }
  }
}
