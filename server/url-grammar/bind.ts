// Turns a request's query into a tool's candidate input, strictly: unknown, conflicting and misplaced parameters
// become structured errors with exact repair URLs, strings become numbers and booleans where the schema says so,
// and the raw= tail lands in the tool's rawField. Validating the candidate is the kernel's job (run-tool.ts).
import type { z } from "zod";
import { ErrorCode, ToolError } from "../errors.js";
import { fieldsOf, type FieldInfo } from "./input-fields.js";
import { MAX_RAW_BYTES } from "./limits.js";
import { stagingAdvice, stagingPlan } from "./staging-advice.js";
import { decodeQueryComponent } from "./percent.js";
import { encodeUrlText } from "./encode.js";
import type { QuerySegment } from "./query.js";
import { editRequestUrl, type RequestUrl } from "./request-url.js";

export interface UrlBinding {
  /** Agent shorthands: alias -> canonical field (e.g. file -> path). */
  aliases?: Record<string, string>;
  /** The field that receives the raw= tail, if the tool takes content. */
  rawField?: string;
  /** Control parameters a raw tail must not swallow, beyond the schema's own fields. */
  controlNames?: string[];
}

const INTEGER = /^[+-]?\d{1,15}$/;
const PERCENT_ESCAPE = /%[0-9A-Fa-f]{2}/;

function convert(info: FieldInfo, value: string): unknown {
  switch (info.kind) {
    case "number":
      return INTEGER.test(value.trim()) ? Number(value.trim()) : value;
    case "boolean": {
      const v = value.trim().toLowerCase();
      if (v === "1" || v === "true") return true;
      if (v === "0" || v === "false") return false;
      return value;
    }
    default:
      return value;
  }
}

/** Levenshtein distance, small inputs only (parameter names). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

function suggestKey(unknown: string, known: string[]): string | undefined {
  const lower = unknown.toLowerCase();
  const scored = known
    .map((k) => ({ k, d: distance(lower, k.toLowerCase()) }))
    .filter((s) => s.d <= (unknown.length > 4 ? 2 : 1));
  if (scored.length === 0) return undefined;
  const best = Math.min(...scored.map((s) => s.d));
  const winners = scored.filter((s) => s.d === best);
  return winners.length === 1 ? winners[0]!.k : undefined;
}

// Parameter names agents carry over from other tools' APIs, and what each means here.
const PATH_SYNONYMS = new Set(["filepath", "file_path", "filePath", "filename", "file_name", "fileName", "target"]);
const CONTENT_SYNONYMS = new Set(["text", "body", "data", "contents", "cmd"]);
// Raw fields whose one meaning a content synonym can take (not edit's new=, which text= could mean old= for).
const CONTENT_FIELDS = new Set(["content", "command", "patch", "pattern", "chunk"]);
// Names other tools give a file-name glob; here include= takes globs (on /f and /g).
const GLOB_SYNONYMS = new Set(["pattern", "glob", "files"]);
const GLOB_CHARS = /[*?[{]/;
const LINE_RANGE = /^(\d{1,9})\s*(?:-|:|,|\.\.)\s*(\d{1,9})$/;

/**
 * A parameter spelled the way another tool's API spells it (file_path, text, lines=5-10): answered with the
 * exact canonical URL, never guessed into a call. Undefined when the name is no known synonym here.
 */
function synonymRepair(
  seg: QuerySegment,
  url: RequestUrl,
  shape: Record<string, unknown>,
  binding: UrlBinding,
): ToolError | undefined {
  const key = seg.key;
  if (PATH_SYNONYMS.has(key) && "path" in shape) {
    return new ToolError(ErrorCode.unknownParameter, `"${key}" is spelled path= here. Fetch the repair URL.`, {
      detail: { parameter: key, canonical: "path" },
      repair: editRequestUrl(url, { rename: { from: key, to: "path" } }),
    });
  }
  if (GLOB_SYNONYMS.has(key) && "include" in shape) {
    // /f?pattern=*.py: a glob is include= here; a plain word is text the name contains (name=).
    const to = GLOB_CHARS.test(seg.value) || !("name" in shape) ? "include" : "name";
    return new ToolError(
      ErrorCode.unknownParameter,
      `"${key}" is spelled ${to}= here${to === "include" ? " (include= takes globs)" : ""}. Fetch the repair URL.`,
      {
        detail: { parameter: key, canonical: to },
        repair: editRequestUrl(url, { rename: { from: key, to } }),
      },
    );
  }
  const rawField = binding.rawField;
  if (
    rawField !== undefined &&
    CONTENT_FIELDS.has(rawField) &&
    CONTENT_SYNONYMS.has(key) &&
    url.query.raw === undefined &&
    seg.rawValue !== undefined
  ) {
    return new ToolError(
      ErrorCode.unknownParameter,
      `Content goes in raw=, the last parameter (everything after it is ${rawField}, & and = included), not in "${key}=". Fetch the repair URL.`,
      {
        detail: { parameter: key, canonical: "raw" },
        repair: editRequestUrl(url, { drop: [key], rawText: encodeUrlText(seg.value) }),
      },
    );
  }
  const lines = key === "lines" || key === "line" || key === "range" ? LINE_RANGE.exec(seg.value.trim()) : null;
  if (lines && "offset" in shape && "limit" in shape) {
    const from = Number(lines[1]);
    const to = Number(lines[2]);
    if (from >= 1 && to >= from) {
      return new ToolError(
        ErrorCode.unknownParameter,
        `Lines ${from}-${to} are offset=${from}&limit=${to - from + 1} here. Fetch the repair URL.`,
        {
          detail: { parameter: key, canonical: ["offset", "limit"] },
          repair: editRequestUrl(url, {
            drop: [key, "offset", "limit"],
            add: [
              ["offset", String(from)],
              ["limit", String(to - from + 1)],
            ],
          }),
        },
      );
    }
  }
  return undefined;
}

export interface BindOptions {
  /** The tool's input schema: which parameters exist and which are numbers, booleans or lists. */
  schema: z.ZodObject;
  binding: UrlBinding;
  url: RequestUrl;
}

/** Returns the candidate input (not yet validated) or throws a ToolError an agent can act on. */
export function bindQueryInput({ schema, binding, url }: BindOptions): Record<string, unknown> {
  const { shape, names: fields, info: fieldInfo } = fieldsOf(schema);
  const aliases = binding.aliases ?? {};
  const knownNames = () => [...fields, ...Object.keys(aliases), ...(binding.rawField ? ["raw"] : [])];

  const values = new Map<string, string[]>();
  const spelledAs = new Map<string, Set<string>>();
  for (const seg of url.query.segments) {
    const canonical = aliases[seg.key] ?? seg.key;
    if (!(canonical in shape)) {
      const synonym = synonymRepair(seg, url, shape, binding);
      if (synonym) throw synonym;
      const known = knownNames();
      const suggestion = suggestKey(
        seg.key,
        known.filter((k) => k !== "raw"),
      );
      throw new ToolError(
        ErrorCode.unknownParameter,
        suggestion
          ? `Unknown parameter "${seg.key}"; did you mean "${suggestion}"? Fetch the repair URL.`
          : `Unknown parameter "${seg.key}". This route accepts: ${known.join(", ")}.`,
        {
          detail: { parameter: seg.key, accepted: known },
          ...(suggestion ? { repair: editRequestUrl(url, { rename: { from: seg.key, to: suggestion } }) } : {}),
        },
      );
    }
    const list = values.get(canonical);
    if (list) list.push(seg.value);
    else values.set(canonical, [seg.value]);
    const spellings = spelledAs.get(canonical);
    if (spellings) spellings.add(seg.key);
    else spelledAs.set(canonical, new Set([seg.key]));
  }

  for (const [canonical, spellings] of spelledAs) {
    if (spellings.size > 1) {
      throw new ToolError(
        ErrorCode.conflictingParameters,
        `Use one spelling of ${canonical}: ${[...spellings].join(" or ")}, not both.`,
        {
          detail: { parameters: [...spellings] },
        },
      );
    }
  }

  const candidate: Record<string, unknown> = {};
  for (const [canonical, list] of values) {
    const info = fieldInfo.get(canonical)!;
    if (info.kind === "array") {
      candidate[canonical] = list.map((v) => convert(info.element ?? { kind: "string" }, v));
    } else {
      const distinct = list.length === 1 ? list : [...new Set(list)];
      if (distinct.length > 1) {
        throw new ToolError(
          ErrorCode.conflictingParameters,
          `${canonical} was given ${list.length} different values; give it once.`,
          {
            detail: { parameter: canonical, values: distinct },
          },
        );
      }
      candidate[canonical] = convert(info, distinct[0]!);
    }
  }

  if (url.query.raw) {
    if (!binding.rawField) {
      throw new ToolError(ErrorCode.unexpectedRaw, "This route takes no raw= content; remove it.", {
        repair: editRequestUrl(url, { rawText: null }),
      });
    }
    rejectMisplacedParameters(
      url,
      [...fields, ...Object.keys(aliases), ...(binding.controlNames ?? [])],
      givenBefore(url, aliases, values),
    );
    const bytes = Buffer.byteLength(url.query.raw.text, "utf8");
    if (bytes > MAX_RAW_BYTES) {
      const plan = stagingPlan(bytes, Buffer.byteLength(url.query.raw.rawText, "utf8"));
      throw new ToolError(
        ErrorCode.rawTooLong,
        `raw= content is ${bytes} bytes; the limit is ${MAX_RAW_BYTES}. ${stagingAdvice(plan)}`,
        {
          detail: { bytes, limit: MAX_RAW_BYTES, chunks: plan.count, chunkBytes: plan.chunkBytes },
          agentAction: "stage_content",
        },
      );
    }
    if (candidate[binding.rawField] !== undefined) {
      throw new ToolError(
        ErrorCode.conflictingParameters,
        `${binding.rawField} was given both as a parameter and as raw=; keep one.`,
        {
          detail: { parameters: [binding.rawField, "raw"] },
          repair: editRequestUrl(url, { drop: [...(spelledAs.get(binding.rawField) ?? [])] }),
        },
      );
    }
    candidate[binding.rawField] = url.query.raw.text;
  }

  return candidate;
}

/**
 * A piece after raw= that the query grammar would read as one of the route's parameters ("...&wait=1000")
 * is almost always a parameter placed after raw= by mistake. Only a literal & on the wire starts such a
 * piece: an & the client escaped (~a, or %26 from a percent-encoding library) is content.
 */
function rejectMisplacedParameters(url: RequestUrl, names: string[], givenBeforeRaw: ReadonlySet<string>): void {
  const rawTail = url.query.raw!.rawText;
  const nameSet = new Set([...names, "raw", "enc"]);
  for (let at = rawTail.indexOf("&"); at !== -1;) {
    const next = rawTail.indexOf("&", at + 1);
    const piece = rawTail.slice(at + 1, next === -1 ? undefined : next);
    const eq = piece.indexOf("=");
    const name = eq > 0 ? decodeQueryComponent(piece.slice(0, eq)) : undefined;
    if (name !== undefined && nameSet.has(name)) {
      if (givenBeforeRaw.has(name)) throw ampersandInContent(url, name);
      const remaining = rawTail.slice(0, at) + (next === -1 ? "" : rawTail.slice(next));
      const moved = { rawKey: piece.slice(0, eq), rawValue: piece.slice(eq + 1), key: name, value: "" };
      const repair = editRequestUrl(
        { ...url, query: { ...url.query, segments: [...url.query.segments, moved] } },
        { rawText: remaining },
      );
      throw new ToolError(
        ErrorCode.misplacedParameter,
        `"&${name}=" appears after raw=, where everything is content. Put ${name} before raw= (the repair URL does), or write the & as ~a if it is content.`,
        { detail: { parameter: name }, repair },
      );
    }
    at = next;
  }
}

/** Parameter names (any spelling) whose field the query before raw= already gave. */
function givenBefore(url: RequestUrl, aliases: Record<string, string>, values: Map<string, string[]>): Set<string> {
  const names = new Set([...url.query.segments.map((seg) => seg.key), ...values.keys()]);
  for (const [alias, canonical] of Object.entries(aliases)) if (values.has(canonical)) names.add(alias);
  return names;
}

/**
 * "&path=" after raw= when path= was already given before it: moving it would give path twice (a conflict), so
 * it is content. The repair sends the same content with every literal & escaped in the tail's own style: %26 in a
 * tail that already carries percent-escapes (a standard encoder's, whose ~ may be literal), else ~a.
 */
function ampersandInContent(url: RequestUrl, name: string): ToolError {
  const tail = url.query.raw!.rawText;
  const rawText = tail.replaceAll("&", PERCENT_ESCAPE.test(tail) ? "%26" : "~a");
  return new ToolError(
    ErrorCode.misplacedParameter,
    `"&${name}=" appears after raw=, where everything is content, and ${name} is already given before raw=, so it is read as content with a literal &. Write & in content as ~a or %26; the repair URL does.`,
    { detail: { parameter: name, content: true }, repair: editRequestUrl(url, { rawText }) },
  );
}
