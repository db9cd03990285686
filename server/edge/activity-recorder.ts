// Records every authenticated call of either edge (URL data plane, MCP) for the operator: route, outcome, timing, dedupe metadata.
// Tool content never reaches the log: content parameters become byte counts and secret-looking values are redacted.
import type { ActivityQueries } from "../store/activity.js";
import type { QuerySegment, RawTail } from "../url-grammar/query.js";

/** Parameters whose values are content, not addressing: only their size is kept. */
const CONTENT_PARAMS = new Set([
  "raw",
  "old",
  "new",
  "content",
  "query",
  "grep",
  "name",
  "pattern",
  "command",
  "patch",
  "chunk",
  // what an agent types into a pty=1 process (/i), and the output it waits for
  "text",
  "expect",
]);
const SECRET_NAME = /token|secret|passw|key|credential|auth|cookie|session_?id/i;
const SECRET_VALUE = [
  /^(sk|pk|rk)-[A-Za-z0-9_-]{12,}/, // API keys in the sk-... family
  /^gh[pousr]_[A-Za-z0-9]{20,}/, // GitHub tokens
  /^xox[abprs]-/, // Slack tokens
  /^AKIA[0-9A-Z]{16}$/, // AWS access key ids
  /^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\./, // JWTs
  /^[A-Fa-f0-9]{32,}$/, // long hex secrets
  /^[A-Za-z0-9+/_-]{40,}={0,2}$/, // long base64 blobs
];
const MAX_VALUE_CHARS = 120;
/** Parameters whose values are URLs an agent fetched (webfetch): only the host is kept, never path or query. */
const URL_PARAMS = new Set(["url"]);

/** The host of a URL value ("example.com"), or its size when it does not parse. */
function hostOnly(value: string): string {
  try {
    const host = new URL(value.trim()).hostname;
    if (host) return host;
  } catch {
    // not a URL: fall through to its size
  }
  return `<${Buffer.byteLength(value, "utf8")} bytes>`;
}

export function redactValue(name: string, value: string): string {
  if (CONTENT_PARAMS.has(name)) return `<${Buffer.byteLength(value, "utf8")} bytes>`;
  if (URL_PARAMS.has(name)) return hostOnly(value);
  if (SECRET_NAME.test(name)) return "<redacted>";
  if (SECRET_VALUE.some((re) => re.test(value))) return "<redacted>";
  return value.length > MAX_VALUE_CHARS ? `${value.slice(0, MAX_VALUE_CHARS)}…` : value;
}

/** `rawField`: the tool field the raw= tail fills, so a URL given as raw= is kept as its host too. */
export function redactParams(
  segments: QuerySegment[],
  raw: RawTail | undefined,
  rawField?: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const seg of segments) {
    const v = redactValue(seg.key, seg.value);
    out[seg.key] = out[seg.key] === undefined ? v : `${out[seg.key]}, ${v}`;
  }
  if (raw) out.raw = redactValue(rawField !== undefined && URL_PARAMS.has(rawField) ? rawField : "raw", raw.text);
  return out;
}

export interface CallRecord {
  sessionId: string;
  generation: number;
  route: string;
  tool: string | null;
  ok: boolean;
  errorCode: string | null;
  httpStatus: number;
  startedAt: number;
  callId?: string | undefined;
  dedupe?: string | undefined;
  params: Record<string, string> | null;
}

export function createActivityRecorder(activity: ActivityQueries, now: () => number = Date.now) {
  return (record: CallRecord): void => {
    activity.insert({
      sessionId: record.sessionId,
      generation: record.generation,
      at: record.startedAt,
      route: record.route,
      tool: record.tool,
      ok: record.ok,
      errorCode: record.errorCode,
      httpStatus: record.httpStatus,
      durationMs: Math.max(0, now() - record.startedAt),
      callId: record.callId ?? null,
      dedupe: record.dedupe ?? null,
      params: record.params,
    });
  };
}
