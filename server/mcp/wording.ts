// Words for the MCP transport: the kernel's answers carry facts (errorDetail, fields) and hints worded for the URL
// edge (exact URLs to fetch, route letters, `~q`). An MCP client has tools, not URLs: this renderer rewords each
// answer before it leaves the MCP edge. Bridge URLs become the tool call that does the same (read, glob,
// mutation_result, shell_stop) or are dropped; repair hints of known error codes are written in MCP tool and field
// names; other hints keep only their sentences that name no URL.

type Body = Record<string, unknown>;

/** The next step as an MCP tool call: what a `next`, `read` or `poll` field holds over MCP. */
export interface McpToolCall {
  tool: string;
  arguments: Record<string, unknown>;
}

/**
 * The route letter of a bridge URL: origin, /v0/, the capability, a route letter (https://host/v0/<cap>/r?path=...),
 * then nothing or a raw tail, query or fragment; undefined for anything else. Scanned by index, not a regular
 * expression, so answer text of any shape costs linear time (test/unit/regex-safety.test.ts).
 */
function bridgeRouteOf(value: string): string | undefined {
  if (!value.startsWith("http://") && !value.startsWith("https://")) return undefined;
  if (/\s/.test(value)) return undefined;
  const v0 = value.indexOf("/v0/", value.indexOf("://") + 3);
  if (v0 < 0) return undefined;
  const slash = value.indexOf("/", v0 + 4);
  if (slash <= v0 + 4) return undefined;
  const route = value.charAt(slash + 1);
  const after = value.charAt(slash + 2);
  if (route < "a" || route > "z" || (after !== "" && !"/?~#".includes(after))) return undefined;
  return route;
}
/** Fields that carry content (a file's, a command's, a page's): never reworded, whatever they hold. */
const CONTENT_KEYS = new Set([
  "content",
  "lines",
  "stdout",
  "stderr",
  "transcript",
  "text",
  "excerpt",
  "snippet",
  // a pty=1 process's screen and output
  "screen",
  "scrollback",
  "output",
]);
/**
 * Words that only make sense on the URL edge: a capability URL (/v0/), a route letter (/e, /r?...), a raw `~`
 * segment, "fetch retry", "this URL" and their kind, a URL parameter (offset=). Web addresses and "fetch a public address"
 * stay.
 */
const URL_WORDING = [
  /\/v0\//,
  /(?:^|[\s(`"'])\/[a-z](?![\w/.-])/,
  /~[a-z]\b/,
  /\bfetch(ing)? (the|this|that|it|its|each|every|next|poll|retry|repair|repeat|read|one|again)\b/i,
  /\b(this|that|the same|exact|next|repair|retry|read|poll) URLs?\b/i,
  /(?:^|[\s(`"'])[a-z][a-zA-Z]*=(?!=)/,
];

/** Whether a sentence names a URL-edge step. */
export function namesUrlStep(sentence: string): boolean {
  return URL_WORDING.some((pattern) => pattern.test(sentence));
}

/** Fields that only carry a URL to correct or repeat the request: MCP words them in repairHint instead. */
const URL_ONLY_FIELDS = new Set(["repair", "retry", "find", "searchUrl", "reads", "blob"]);

/** The MCP call a bridge URL stands for, when there is one. */
export function toolCallOfUrl(url: string): McpToolCall | undefined {
  const route = bridgeRouteOf(url);
  if (!route) return undefined;
  let params: URLSearchParams;
  try {
    params = new URL(url).searchParams;
  } catch {
    return undefined;
  }
  const num = (name: string) =>
    params.has(name) && /^\d+$/.test(params.get(name)!) ? Number(params.get(name)) : undefined;
  if (route === "r" && params.getAll("path").length === 1) {
    const offset = num("offset");
    const limit = num("limit");
    return {
      tool: "read",
      arguments: {
        path: params.get("path")!,
        ...(offset !== undefined ? { offset } : {}),
        ...(limit !== undefined ? { limit } : {}),
      },
    };
  }
  // glob cannot continue after a path (after=): such a URL has no call.
  if (route === "f" && !params.has("after") && (params.has("name") || params.has("include")))
    return { tool: "glob", arguments: { pattern: params.get("include") ?? params.get("name")! } };
  if (route === "j" && params.has("call"))
    return { tool: "mutation_result", arguments: { callId: params.get("call")! } };
  if (route === "x" && num("stop") !== undefined) return { tool: "shell_stop", arguments: { pid: num("stop")! } };
  // pty=1 processes: /m reads one (shell_output with pid, offset for raw bytes), /i types into it (shell_input).
  const pid = num("pid");
  if (route === "m" && pid !== undefined) {
    const offset = num("offset");
    return { tool: "shell_output", arguments: { pid, ...(offset !== undefined ? { offset } : {}) } };
  }
  if (route === "i" && pid !== undefined) return { tool: "shell_input", arguments: { pid } };
  return undefined;
}

/** The sentences of a hint that name no URL, route letter or URL parameter; undefined when none is left. */
export function withoutUrlSentences(hint: string): string | undefined {
  const kept = hint
    .split(/(?<=[.;:!?])\s+(?=[A-Z(])/)
    .filter((sentence) => !namesUrlStep(sentence))
    .join(" ")
    .trim();
  return kept.length > 0 ? kept : undefined;
}

/** A read call of `path`, as the hints below name it. */
function readOf(path: unknown): string {
  return typeof path === "string" ? `read {"path":"${path}"}` : "read";
}

/** The MCP-worded repair of a failure, from its code and facts; undefined for codes whose kernel hint is kept. */
function repairOf(body: Body, detail: Body): string | undefined {
  const path = detail.path;
  switch (body.errorCode) {
    case "stale_read":
      return `The file changed or was not shown to you in full: call ${readOf(path)} (follow each next until it has none), then call write again; for a local change use edit or patch, which need no full read.`;
    case "edit_ambiguous":
      return `oldString occurs ${String(detail.occurrences ?? "several")} times${Array.isArray(detail.lines) ? ` (lines ${detail.lines.join(", ")})` : ""}: add surrounding lines to oldString so it matches once, set replaceAll: true to change every occurrence, or change several places in one patch call.`;
    case "edit_no_match":
      return `oldString does not occur in the file${Array.isArray(detail.looseMatchLines) ? ` exactly (it matches ignoring indentation at line ${detail.looseMatchLines.join(", ")})` : ""}: call ${readOf(path)}, copy oldString exactly from it, and call edit again.`;
    case "edit_no_change":
      return "oldString and newString are the same text: nothing to change.";
    case "stale_edit":
      return `The lines you meant have changed since you read them: call ${readOf(path)} and call edit again with oldString copied from it.`;
    case "patch_hunk_not_found":
      return `A hunk's context or removed lines do not occur in the file: call ${readOf(path)} and build the patch from its current lines.`;
    case "path_not_found":
      return `${typeof path === "string" ? path : "The path"} does not exist: find the right name with glob (e.g. {"pattern":"**/${typeof path === "string" ? path.split("/").pop() : "name"}"}) or read its folder.`;
    case "intent_result_expired":
      return "This call ran before and its result is no longer kept, so it did not run again: check the project state with read; to run it again on purpose, call it with a new idempotency key.";
    case "interrupted":
      return "The bridge restarted while this call ran; it was not re-run and its effects may be partial: check the project state with read, then call it again with a new idempotency key if it should run.";
    default:
      return undefined;
  }
}

/** agentAction codes that name a URL step, as the MCP step that replaces it. */
const AGENT_ACTIONS: Record<string, string> = { fetch_repair: "correct_request" };

/**
 * The answer worded for MCP: bridge URLs as tool calls (or gone), hints without URL steps, failures with an MCP
 * repairHint. A success keeps every field's JSON type (its outputSchema is checked): a URL there becomes the
 * call's text, `tool {arguments}`. Idempotent: wording a worded answer changes nothing.
 */
export function mcpWorded(body: Body): Body {
  const failure = body.ok === false;
  const out = rewordValue(body, 0, failure) as Body;
  if (failure) {
    const detail = out.errorDetail && typeof out.errorDetail === "object" ? (out.errorDetail as Body) : {};
    const hint =
      repairOf(out, detail) ?? (typeof out.repairHint === "string" ? withoutUrlSentences(out.repairHint) : undefined);
    if (hint !== undefined) out.repairHint = hint;
    else delete out.repairHint;
    if (typeof out.agentAction === "string" && AGENT_ACTIONS[out.agentAction])
      out.agentAction = AGENT_ACTIONS[out.agentAction];
  } else if (
    (out.state === "pending" || out.state === "running") &&
    typeof out.callId === "string" &&
    typeof out.hint === "string"
  ) {
    out.hint = `Accepted and still ${out.state}: call ${callText({ tool: "mutation_result", arguments: { callId: out.callId } })} for its outcome; do not repeat the call.`;
  }
  return out;
}

/** A tool call as text, where a field must stay a string. */
export function callText(call: McpToolCall): string {
  return `${call.tool} ${JSON.stringify(call.arguments)}`;
}

/** Keys whose string values are words for the agent (hints, notices): reworded sentence by sentence. */
const HINT_KEY = /^(hint|notice)$|Hint$|Notice$/;
const NO_MCP_CALL = "(a URL step; over MCP use the tools listed)";

function rewordValue(value: unknown, depth: number, failure: boolean): unknown {
  if (depth > 6) return value;
  if (Array.isArray(value))
    return value.map((v) =>
      typeof v === "string" && bridgeRouteOf(v) !== undefined
        ? urlValue(v, failure)
        : rewordValue(v, depth + 1, failure),
    );
  if (!value || typeof value !== "object") return value;
  const out: Body = {};
  for (const [key, field] of Object.entries(value as Body)) {
    if (failure && URL_ONLY_FIELDS.has(key)) continue;
    if (CONTENT_KEYS.has(key)) {
      out[key] = field;
      continue;
    }
    if (typeof field === "string") {
      if (bridgeRouteOf(field) !== undefined) {
        const worded = urlValue(field, failure);
        if (worded !== undefined) out[key] = worded;
        continue;
      }
      if (HINT_KEY.test(key) && key !== "repairHint") {
        out[key] = withoutUrlSentences(field) ?? (failure ? undefined : NO_MCP_CALL);
        if (out[key] === undefined) delete out[key];
        continue;
      }
    }
    out[key] = rewordValue(field, depth + 1, failure);
  }
  return out;
}

/** A bridge URL as MCP gives it: in a failure the call itself (or nothing), in a success the call's text. */
function urlValue(url: string, failure: boolean): unknown {
  const call = toolCallOfUrl(url);
  if (failure) return call;
  return call ? callText(call) : NO_MCP_CALL;
}
