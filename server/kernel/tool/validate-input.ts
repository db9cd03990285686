// Parses candidate input with a tool's zod schema and turns the first zod issue into our structured error
// (missing_parameter, invalid_parameter with a clamped repair URL), whichever transport the input came from.
import type { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import type { SegmentEdit } from "../../url-grammar/request-url.js";
import { fieldsOf } from "../../url-grammar/input-fields.js";

export interface ValidateInputOptions {
  /** The field a URL's raw= tail fills: its errors name "raw", the way the agent spelled it. */
  rawField?: string;
  /** Example suffix used in missing-parameter hints ("/r?path=src/app.ts"). */
  example?: string;
  /** The current request with a correction (ctx.urls.repair); undefined, or absent, off the URL transport. */
  repair?: (edit: SegmentEdit) => string | undefined;
}

/** Returns the schema's parsed output or throws the ToolError an agent can act on. */
export function validateInput<T = Record<string, unknown>>(
  schema: z.ZodObject,
  candidate: Record<string, unknown>,
  options: ValidateInputOptions = {},
): T {
  const parsed = schema.safeParse(candidate);
  if (parsed.success) return parsed.data as T;
  throw inputError(schema, parsed.error, candidate, options);
}

/** The structured error for a failed parse of `candidate`: its first issue, worded by the field it names. */
/** Fields whose unit is milliseconds, where a value below the minimum is read as seconds in the repair. */
const MILLISECOND_FIELDS = new Set(["timeout"]);
/** Words agents use for a flag (regex=yes), repaired to the 1 or 0 they mean; never accepted silently. */
const BOOLEAN_WORDS = new Map([
  ["yes", true],
  ["y", true],
  ["on", true],
  ["no", false],
  ["n", false],
  ["off", false],
]);

export function inputError(
  schema: z.ZodObject,
  error: z.ZodError,
  candidate: Record<string, unknown>,
  options: ValidateInputOptions,
): ToolError {
  const issue = error.issues[0]!;
  const fieldInfo = fieldsOf(schema).info;
  const field = String(issue.path[0] ?? "");
  const info = fieldInfo.get(field);
  if (!field || !info) {
    return new ToolError(ErrorCode.invalidParameter, issue.message, { detail: { issue: issue.code } });
  }
  const spelled = field === options.rawField ? "raw" : field;
  if (candidate[field] === undefined) {
    return new ToolError(
      ErrorCode.missingParameter,
      `Missing required parameter ${spelled}.${options.example ? ` Example: ${options.example}` : ""}`,
      {
        detail: { parameter: spelled },
      },
    );
  }
  const received = candidate[field];
  if (info.kind === "number" && typeof received === "number") {
    // A millisecond field given a small number was almost always meant in seconds (timeout=30 for 30 s):
    // repairing it to the minimum would kill the command after 100 ms.
    const asSeconds = received * 1000;
    if (
      MILLISECOND_FIELDS.has(field) &&
      info.min !== undefined &&
      received > 0 &&
      received < info.min &&
      asSeconds >= info.min &&
      asSeconds <= (info.max ?? asSeconds)
    ) {
      return new ToolError(
        ErrorCode.invalidParameter,
        `${field} is in milliseconds (${info.min}..${info.max}); ${received} looks like seconds, so the repair URL asks for ${asSeconds} ms.`,
        {
          detail: { parameter: field, received, min: info.min, max: info.max, readAs: "seconds" },
          repair: options.repair?.({ set: { key: field, value: String(asSeconds) } }),
        },
      );
    }
    const clamped = Math.min(info.max ?? received, Math.max(info.min ?? received, received));
    if (clamped !== received) {
      return new ToolError(
        ErrorCode.invalidParameter,
        `${field} must be between ${info.min} and ${info.max}; fetch the repair URL for the clamped value.`,
        {
          detail: { parameter: field, received, min: info.min, max: info.max },
          repair: options.repair?.({ set: { key: field, value: String(clamped) } }),
        },
      );
    }
  }
  const meant =
    info.kind === "boolean" && typeof received === "string"
      ? BOOLEAN_WORDS.get(received.trim().toLowerCase())
      : undefined;
  if (meant !== undefined) {
    const repair = options.repair?.({ set: { key: field, value: meant ? "1" : "0" } });
    return new ToolError(
      ErrorCode.invalidParameter,
      `${spelled}: expected 1, 0, true or false; "${received}" reads as ${meant ? 1 : 0}${repair ? ", which the repair URL sends" : ""}.`,
      {
        detail: { parameter: spelled, received: String(received).slice(0, 80) },
        ...(repair ? { repair } : {}),
      },
    );
  }
  const expected =
    info.kind === "number"
      ? "an integer"
      : info.kind === "boolean"
        ? "1, 0, true or false"
        : info.kind === "enum"
          ? `one of ${info.options?.join(", ")}`
          : undefined;
  return new ToolError(
    ErrorCode.invalidParameter,
    `${spelled}: ${expected ? `expected ${expected}` : issue.message}.`,
    {
      detail: { parameter: spelled, received: typeof received === "string" ? received.slice(0, 80) : received },
    },
  );
}
