// A plain 2025-era tools/call answered without the SDK's per-message dispatch, in the bytes the SDK's path answers:
// the transport-neutral part the MCP socket (socket-direct-call.ts) and the HTTP leg (http-direct-call.ts) share.
// Each adapter decides only when its transport is in the 2025 era, and frames the answer.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { safeParseCompiled } from "../kernel/tool/compiled-schema.js";
import { isPromise, type MaybePromise } from "../kernel/tool/runner.js";
import { callTool } from "./call-tool.js";
import {
  kernelToolsOf,
  listingKeyOf,
  registeredTools,
  type McpDeps,
  type McpScope,
  type RegisteredTool,
} from "./server.js";

export type RpcId = string | number;

const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const PARAMS_KEYS = new Set(["name", "arguments"]);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);
const onlyKeys = (value: Record<string, unknown>, allowed: Set<string>) =>
  Object.keys(value).every((key) => allowed.has(key));

/** A call admitted to the direct path: its id, its listed tool and the arguments as its input schema parsed them. */
export interface DirectCall {
  id: RpcId;
  tool: RegisteredTool;
  args: Record<string, unknown>;
}

/** Whether a JSON value is a tools/call request the SDK's schemas accept with nothing beyond name and arguments. */
function plainToolCall(
  value: unknown,
): { id: RpcId; name: string; args: Record<string, unknown> | undefined } | undefined {
  if (
    !isPlainObject(value) ||
    value.jsonrpc !== "2.0" ||
    value.method !== "tools/call" ||
    !onlyKeys(value, REQUEST_KEYS)
  )
    return undefined;
  const { id, params } = value;
  if (!(typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)))) return undefined;
  if (!isPlainObject(params) || typeof params.name !== "string" || !onlyKeys(params, PARAMS_KEYS)) return undefined;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
  return { id, name: params.name, args: params.arguments as Record<string, unknown> | undefined };
}

/** How the SDK words a standard-schema issue (its formatIssue). */
function issueText(issue: {
  message: string;
  path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> | undefined;
}): string {
  if (!issue.path?.length) return issue.message;
  return `${issue.path.map((p) => String(typeof p === "object" ? p.key : p)).join(".")}: ${issue.message}`;
}

/** The SDK's tool-error result (McpServer.createToolError). */
const toolError = (text: string): CallToolResult => ({ content: [{ type: "text", text }], isError: true });
/** The SDK's tool-error result for a handler that threw. */
const thrown = (error: unknown): CallToolResult => toolError(error instanceof Error ? error.message : String(error));

/**
 * The tools one listing registers, by name, and the direct path over them. A plain tools/call (jsonrpc, id, method,
 * params of name and arguments only, no _meta) whose tool is listed and whose arguments pass the tool's input
 * schema is answered here: the same input schema, the same runner (call-tool.ts callTool), the SDK's own check of
 * structuredContent against the published outputSchema and its failure wording, the same envelope. Skipped per
 * call: the SDK's JSON-RPC type guards and envelope parse, two parses of the request against CallToolRequestSchema,
 * its context and abort controller, and the re-parse of the result against CallToolResultSchema (a copy of the same
 * keys: our results carry only content, structuredContent and isError). Anything else (other methods, _meta, an
 * unknown tool, arguments the schema refuses) is not admitted and goes to the SDK, which words those refusals.
 */
export class DirectTools {
  private readonly tools: Map<string, RegisteredTool>;

  /** `scope`: any scope with the listing these tools serve (every call brings its own). */
  constructor(
    private readonly deps: McpDeps,
    scope: McpScope,
  ) {
    this.tools = new Map(registeredTools(deps, scope).map((tool) => [tool.spec.name, tool]));
  }

  /** The call `value` is, when the direct path answers it as the SDK would; undefined: hand it to the SDK. */
  admit(value: unknown): DirectCall | undefined {
    const call = plainToolCall(value);
    if (!call) return undefined;
    const tool = this.tools.get(call.name);
    if (!tool) return undefined;
    const parsed = safeParseCompiled(tool.spec.input, call.args ?? {});
    if (!parsed.success) return undefined;
    return { id: call.id, tool, args: parsed.data as Record<string, unknown> };
  }

  /**
   * Runs an admitted call with `scope` and answers the JSON-RPC response's text, as the SDK serialises it:
   * synchronously when the tool answered synchronously (a read), so no microtask comes between run and answer.
   */
  answer(call: DirectCall, scope: McpScope, defer?: (record: () => void) => void): MaybePromise<string> {
    const line = (result: CallToolResult) => JSON.stringify({ result, jsonrpc: "2.0", id: call.id });
    const result = this.result(call, scope, defer);
    return isPromise(result) ? result.then(line) : line(result);
  }

  /** What the SDK's tools/call handler answers for this call: the handler's result, checked against outputSchema. */
  private result(
    { tool, args }: DirectCall,
    scope: McpScope,
    defer: ((record: () => void) => void) | undefined,
  ): MaybePromise<CallToolResult> {
    try {
      const result = callTool(this.deps, scope, kernelToolsOf(this.deps), tool.spec, args, undefined, defer);
      const checked = isPromise(result)
        ? result.then((settled) => this.checked(tool, settled))
        : this.checked(tool, result);
      return isPromise(checked) ? checked.catch(thrown) : checked;
    } catch (error) {
      return thrown(error);
    }
  }

  /** The handler's result as the SDK passes it on: refused when structuredContent does not fit the outputSchema. */
  private checked(tool: RegisteredTool, result: CallToolResult): MaybePromise<CallToolResult> {
    const name = tool.spec.name;
    if (result.isError) return result;
    if (result.structuredContent === undefined)
      return toolError(
        `Output validation error: Tool ${name} has an output schema but no structured content was provided`,
      );
    const verdict = (checked: {
      issues?:
        | ReadonlyArray<{ message: string; path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> | undefined }>
        | undefined;
    }) =>
      checked.issues && checked.issues.length > 0
        ? toolError(
            `Output validation error: Invalid structured content for tool ${name}: ${checked.issues.map(issueText).join(", ")}`,
          )
        : result;
    // ajv (fromJsonSchema) checks synchronously; a standard schema may also answer a promise.
    const checked = tool.outputSchema["~standard"].validate(result.structuredContent);
    return isPromise(checked) ? checked.then(verdict) : verdict(checked);
  }
}

/** DirectTools per tool listing (server.ts listingKeyOf), built on first use: for transports without a connection. */
export function createDirectToolsByListing(deps: McpDeps): (scope: McpScope) => DirectTools {
  const byListing = new Map<string, DirectTools>();
  return (scope) => {
    const key = listingKeyOf(scope);
    let tools = byListing.get(key);
    if (!tools) byListing.set(key, (tools = new DirectTools(deps, scope)));
    return tools;
  };
}
