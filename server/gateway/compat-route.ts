// GET <base>/call?tool=<tool id>&content=<base64url(JSON)> (alias /tool): the older generic endpoint that
// reference 000 keeps for clients that cannot build route URLs. It is strict and absent from Init. The JSON
// object is turned into the tool's own canonical URL (written with the reference encoder, so it reads one way
// only), and that URL is what runs: the same binding, errors, repair URLs and journal identity as the route.
import { ErrorCode, ToolError } from "../errors.js";
import type { AnyToolDefinition } from "../kernel/tool/definition.js";
import { encodeQueryValue, encodeUrlText } from "../url-grammar/encode.js";
import { parseRequestUrl, type RequestUrl } from "../url-grammar/request-url.js";

const CANONICAL_BASE64URL = /^[A-Za-z0-9_-]+$/;
const fatalUtf8 = new TextDecoder("utf-8", { fatal: true });
type Scalar = string | number | boolean;

export interface CompatCall {
  tool: AnyToolDefinition;
  /** The tool's own URL carrying the same arguments. */
  url: RequestUrl;
}

function invalid(parameter: string, message: string, detail: Record<string, unknown> = {}): ToolError {
  return new ToolError(ErrorCode.invalidParameter, message, { detail: { parameter, ...detail } });
}

function onlyValue(url: RequestUrl, key: "tool" | "content"): string {
  const found = url.query.segments.filter((s) => s.key === key);
  if (found.length === 0) {
    throw new ToolError(
      ErrorCode.missingParameter,
      `/call needs ${key}=. Form: /call?tool=<tool id>&content=<base64url of a JSON object of the tool's arguments>.`,
      {
        detail: { parameter: key },
      },
    );
  }
  if (found.length > 1)
    throw new ToolError(ErrorCode.conflictingParameters, `Give ${key}= once.`, { detail: { parameter: key } });
  return found[0]!.value;
}

/** Canonical base64url (RFC 4648 §5, no padding) of UTF-8 JSON text holding one object. */
function decodeContent(content: string): Record<string, unknown> {
  const bytes = CANONICAL_BASE64URL.test(content) ? Buffer.from(content, "base64url") : undefined;
  if (!bytes || bytes.toString("base64url") !== content) {
    throw invalid(
      "content",
      "content must be canonical base64url (A-Z a-z 0-9 - _, no padding, no spaces) of a JSON object. Prefer the tool's own route with raw= or staged blobs.",
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(fatalUtf8.decode(bytes));
  } catch {
    throw invalid(
      "content",
      "content decodes to bytes that are not valid UTF-8 JSON. Encode the UTF-8 of a JSON object with base64url.",
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw invalid("content", 'content must hold a JSON object of the tool\'s arguments, e.g. {"path":"src/a.ts"}.');
  return parsed as Record<string, unknown>;
}

function scalarsOf(name: string, value: unknown): Scalar[] {
  const list = Array.isArray(value) ? value : [value];
  for (const v of list) {
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
      throw invalid(name, `Argument ${name} must be a string, number, boolean or an array of them.`, {
        argument: name,
      });
    }
  }
  return list as Scalar[];
}

/** Resolves a /call request to the tool and its canonical URL; binding and validation happen as for the route. */
export function compatCallOf(tools: readonly AnyToolDefinition[], url: RequestUrl): CompatCall {
  const stray = url.query.segments.map((s) => s.key).filter((k) => k !== "tool" && k !== "content");
  if (stray.length > 0 || url.query.raw !== undefined) {
    const parameters = [...stray, ...(url.query.raw !== undefined ? ["raw"] : [])];
    throw new ToolError(
      ErrorCode.unknownParameter,
      `/call takes only tool= and content=; put every argument (journal controls too) in the JSON object. Unexpected: ${parameters.join(", ")}.`,
      {
        detail: { parameters, accepted: ["tool", "content"] },
      },
    );
  }
  const id = onlyValue(url, "tool");
  const tool = tools.find((t) => t.id === id);
  if (!tool) {
    const ids = tools.map((t) => t.id);
    throw invalid("tool", `No tool "${id}". tool= takes a tool id: ${ids.join(", ")}.`, { tools: ids });
  }
  const args = decodeContent(onlyValue(url, "content"));
  const rawField = tool.url.rawField;
  const parts: string[] = [];
  let tail: string | undefined;
  for (const [name, value] of Object.entries(args)) {
    const values = scalarsOf(name, value);
    if (rawField !== undefined && (name === rawField || name === "raw")) {
      if (tail !== undefined || values.length !== 1) {
        throw new ToolError(
          ErrorCode.conflictingParameters,
          `Give the ${rawField} once, as ${rawField} or raw, not both.`,
          { detail: { parameters: [rawField, "raw"] } },
        );
      }
      tail = encodeUrlText(String(values[0]));
      continue;
    }
    for (const v of values) parts.push(`${encodeQueryValue(name)}=${encodeQueryValue(String(v))}`);
  }
  if (tail !== undefined) parts.push(`raw=${tail}`);
  return { tool, url: parseRequestUrl(url.origin, url.basePath, tool.route, parts.join("&")) };
}
