// One authenticated call on a capability base: the route picks a tool or a gateway route (/z, /manifest, /k), a
// tool call becomes candidate input + context for the kernel (server/tool/run-tool.ts), and every answer
// ends in finishCall. URL-only refusals live here: target length, unknown route, wrong base, the query grammar.
import type http from "node:http";
import { failureOf as edgeFailureOf } from "../edge/call.js";
import { ErrorCode, ToolError, type ToolFailure } from "../errors.js";
import type { AnyToolDefinition, CapabilityBase } from "../kernel/tool/definition.js";
import type { CandidateInput, ToolKernel } from "../tool/run-tool.js";
import { isPromise, type MaybePromise, type RunOutcome } from "../kernel/tool/runner.js";
import type { SessionStates } from "../kernel/tool/session-state.js";
import type { Logger } from "../log.js";
import type { PluginHost } from "../plugins/host.js";
import { bindQueryInput } from "../url-grammar/bind.js";
import { declarationError } from "../url-grammar/decoding-tilde.js";
import { MAX_REQUEST_TARGET_BYTES } from "../url-grammar/limits.js";
import { contentBytesAtMost, stagingAdvice, stagingPlan } from "../url-grammar/staging-advice.js";
import { editRequestUrl, type RequestUrl } from "../url-grammar/request-url.js";
import type { Authenticated } from "./authenticate.js";
import { baseFor, openCall, toolContextOf, type AgentFallback, type UrlCall } from "./call-context.js";
import { compatCallOf } from "./compat-route.js";
import { callRecord, finishCall, type RecordCall } from "./finish-call.js";
import { manifestOf } from "./manifest-route.js";
import { answerPluginsRoute, type PluginRouteDeps } from "./plugin-route.js";
import { serveRange } from "./range-route.js";
import { sendBytes, TEXT_CONTENT_TYPE } from "./respond.js";
import type { RouteMatch, RouteTable } from "./route-table.js";

export interface CallDispatchOptions {
  table: RouteTable;
  kernel: ToolKernel;
  plugins: PluginHost;
  states: SessionStates;
  publicOrigin: () => string;
  record: RecordCall;
  log: Logger;
  signal: AbortSignal;
  agentFallback?: AgentFallback;
  /** Staged JSON arguments of a /k call (blob=&count=): the mutation runtime's staging. */
  resolveBlob?: PluginRouteDeps["resolveBlob"];
}

export type CallHandler = (
  res: http.ServerResponse,
  auth: Authenticated,
  route: string,
  rawTarget: string,
  rawQuery: string,
) => Promise<void> | void;

export function createCallDispatch(options: CallDispatchOptions): CallHandler {
  const { table, kernel, record, log } = options;
  const contextOptions = { agentFallback: options.agentFallback, signal: options.signal };
  const pluginDeps: PluginRouteDeps = {
    host: options.plugins,
    kernel,
    ...(options.resolveBlob ? { resolveBlob: options.resolveBlob } : {}),
  };

  return (res, auth, route, rawTarget, rawQuery) => {
    let call = openCall(auth, route, rawQuery, options.publicOrigin(), options.states);
    let toolId: string | null = null;
    let isRange = false;
    let pending: MaybePromise<RunOutcome>;
    try {
      assertTargetLength(rawTarget);
      const badDeclaration = declarationError(call.url.query.declaration);
      if (badDeclaration) throw badDeclaration;
      const match = table.match(route);
      if (!match) throw unknownRoute(table, call, route);
      if (match.kind === "gateway" && match.name === "range") {
        isRange = true;
        const text = serveRange(call.url, call.state, call.baseUrl(auth.base));
        sendBytes(res, 200, TEXT_CONTENT_TYPE, Buffer.from(text, "utf8"));
        record(callRecord(call, "z", null, { ok: true }));
        return;
      }
      toolId = match.kind === "tool" ? match.tool.id : match.name;
      if (match.kind === "gateway" && match.name === "compat") {
        // From here on the call is the tool's own URL: its answer, repairs and record are the route's.
        const compat = compatCallOf(table.tools, call.url);
        call = { ...call, url: compat.url, rawField: compat.tool.url.rawField };
        toolId = compat.tool.id;
        pending = runTool(compat.tool, call);
      } else {
        if (match.kind === "tool") call.rawField = match.tool.url.rawField;
        pending = dispatch(match, call, (id) => {
          toolId = id;
        });
      }
    } catch (error) {
      return finishCall(res, call, toolId, { body: failureOf(error) }, record, !isRange);
    }
    if (isPromise(pending)) {
      return pending.then(
        (outcome) => finishCall(res, call, toolId, outcome, record),
        (error: unknown) => finishCall(res, call, toolId, { body: failureOf(error) }, record),
      );
    }
    finishCall(res, call, toolId, pending, record);
  };

  /** `named` learns a plugin call's tool id (`<plugin>.<tool>`), which the activity record shows instead of "plugins". */
  function dispatch(match: RouteMatch, call: UrlCall, named: (toolId: string) => void): MaybePromise<RunOutcome> {
    if (match.kind === "gateway") {
      if (match.name === "compat") throw new Error("compat calls are resolved before dispatch");
      if (match.name === "manifest") {
        const { cap } = call.auth;
        return { body: manifestOf(table.tools, cap.permissions, cap.worktree !== undefined, call.baseUrl) };
      }
      return answerPluginsRoute(pluginDeps, {
        url: call.url,
        base: call.auth.base,
        tokens: call.auth.tokens,
        ctx: toolContextOf(call, contextOptions),
        named,
      });
    }
    return runTool(match.tool, call);
  }

  function runTool(tool: AnyToolDefinition, call: UrlCall): MaybePromise<RunOutcome> {
    return kernel.runDecoded(tool, () => decodeToolCall(tool, call), toolContextOf(call, contextOptions));
  }

  /** The URL's part of a tool call, after the kernel's permission check: the right base, then the query grammar. */
  function decodeToolCall(tool: AnyToolDefinition, call: UrlCall): CandidateInput {
    const wanted = baseFor(tool);
    // The mutation capability implies read: a read route on the mutation base is served, saving the repair trip.
    const servedHere = wanted === call.auth.base || (wanted === "r" && call.auth.base === "m");
    if (!servedHere) throw statSlip(call.auth.base, tool.route, call.url) ?? wrongBase(tool, wanted, call);
    return bindQueryInput({ schema: tool.schema, binding: tool.url, url: call.url });
  }

  // Tool failures come back as outcomes; this is a gateway refusal (ToolError) or a bug, which the operator sees.
  function failureOf(error: unknown): ToolFailure {
    return edgeFailureOf(error, log, "data plane request failed");
  }
}

function assertTargetLength(rawTarget: string): void {
  const bytes = Buffer.byteLength(rawTarget, "utf8");
  if (bytes <= MAX_REQUEST_TARGET_BYTES) return;
  // The content is not decoded yet; an upper bound on its size keeps every planned chunk within raw='s limit.
  const plan = stagingPlan(contentBytesAtMost(rawTarget), bytes);
  throw new ToolError(
    ErrorCode.requestTargetTooLong,
    `The URL is ${bytes} bytes, over the ${MAX_REQUEST_TARGET_BYTES}-byte limit. If it carries content, ${stagingAdvice(plan).replace(/^Stage/, "stage")}`,
    {
      detail: { bytes, limit: MAX_REQUEST_TARGET_BYTES, chunks: plan.count, chunkBytes: plan.chunkBytes },
      agentAction: "stage_content",
    },
  );
}

/**
 * A common slip: /s?path= (or file=) on the read base means /t (stat), not staging on the wrong base. The one
 * place this rule lives, for an unmatched route and for the stage tool reached on the read base alike.
 */
function statSlip(base: CapabilityBase, route: string, url: RequestUrl): ToolError | undefined {
  if (base !== "r" || route !== "s" || !url.query.segments.some((s) => s.key === "path" || s.key === "file"))
    return undefined;
  return new ToolError(
    ErrorCode.unknownRoute,
    "/s is staging on the mutation base; path metadata is /t (stat). Fetch the repair URL.",
    {
      detail: { route },
      repair: editRequestUrl(url, { route: "t" }),
    },
  );
}

// Route names agents bring from shells and other tools' APIs, and the tool id each means here.
const ROUTE_SYNONYMS: Record<string, string> = {
  ls: "read",
  dir: "read",
  list: "read",
  cat: "read",
  view: "read",
  open: "read",
  run: "terminal",
  bash: "terminal",
  sh: "terminal",
  command: "terminal",
  rg: "grep",
  glob: "find",
  locate: "find",
  patch: "apply_patch",
};
const LISTING_ROUTES = new Set(["ls", "dir", "list"]);

/** /ls, /cat, /run...: the exact canonical URL (on the base the tool belongs to), never a silent alias. */
function synonymRoute(table: RouteTable, call: UrlCall, route: string): ToolError | undefined {
  const tool = table.tools.find((t) => t.id === ROUTE_SYNONYMS[route]);
  if (!tool) return undefined;
  const wanted = baseFor(tool);
  const token = wanted === "r" ? call.auth.tokens.r : call.auth.tokens.m;
  const needsPath =
    LISTING_ROUTES.has(route) && !call.url.query.segments.some((s) => s.key === "path" || s.key === "file");
  const message = `/${route} is /${tool.route} (${tool.id})${wanted === call.auth.base ? "" : ` on the ${wanted === "r" ? "read" : "mutation"} base`} here. Fetch the repair URL.`;
  return new ToolError(
    ErrorCode.unknownRoute,
    token
      ? message
      : `/${route} would be /${tool.route} (${tool.id}), which this session's capability does not include.`,
    {
      detail: { route, canonical: tool.route, tool: tool.id },
      ...(token
        ? {
            repair: editRequestUrl(call.url, {
              basePath: `/v0/${token}`,
              route: tool.route,
              ...(needsPath ? { add: [["path", "."]] } : {}),
            }),
          }
        : {}),
    },
  );
}

function unknownRoute(table: RouteTable, call: UrlCall, route: string): ToolError {
  const base = call.auth.base;
  const url = call.url;
  return (
    statSlip(base, route, url) ??
    synonymRoute(table, call, route) ??
    new ToolError(
      ErrorCode.unknownRoute,
      `No route "/${route}" on this base. Routes: ${table.routesFor(base).join(", ")}.`,
      {
        detail: { route, routes: table.routesFor(base) },
      },
    )
  );
}

function wrongBase(tool: AnyToolDefinition, wanted: CapabilityBase, call: UrlCall): ToolError {
  const token = wanted === "r" ? call.auth.tokens.r : call.auth.tokens.m;
  return new ToolError(
    ErrorCode.wrongCapabilityBase,
    `/${tool.route} (${tool.id}) belongs on the ${wanted === "r" ? "read" : "mutation"} base. Fetch the repair URL.`,
    {
      detail: { tool: tool.id, expectedBase: wanted },
      repair: editRequestUrl(call.url, { basePath: `/v0/${token}`, route: tool.route }),
    },
  );
}
