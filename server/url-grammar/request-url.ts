// The URL of one data-plane request, kept in received form so that every URL we hand back
// (repair, next, retry) preserves the caller's raw tail and parameter spelling exactly.
import { encodeQueryValue, encodeUrlText } from "./encode.js";
import { parseQuery, type ParsedQuery, type QuerySegment } from "./query.js";

export interface RequestUrl {
  /** Public origin used for every URL handed back, e.g. https://x.trycloudflare.com */
  origin: string;
  /** "/v0/<capability>" */
  basePath: string;
  /** Route as requested, without leading slash ("r", "read"). */
  route: string;
  query: ParsedQuery;
}

export interface SegmentEdit {
  /** Rename a key, keeping its raw value. */
  rename?: { from: string; to: string };
  /** Replace a key's value (decoded text; it is re-encoded). */
  set?: { key: string; value: string };
  /** Remove every occurrence of a key. */
  drop?: string[];
  /** Append key=value before raw= (decoded text; re-encoded). */
  add?: Array<[string, string]>;
  route?: string;
  basePath?: string;
  /** Replace the raw tail with this raw (already encoded) text, or remove it with null. */
  rawText?: string | null;
}

export function splitTarget(target: string): { path: string; rawQuery: string } {
  const q = target.indexOf("?");
  return q === -1 ? { path: target, rawQuery: "" } : { path: target.slice(0, q), rawQuery: target.slice(q + 1) };
}

export function parseRequestUrl(origin: string, basePath: string, route: string, rawQuery: string): RequestUrl {
  return { origin, basePath, route, query: parseQuery(rawQuery) };
}

function serializeSegments(segments: Array<Pick<QuerySegment, "rawKey" | "rawValue">>): string[] {
  return segments.map((s) => (s.rawValue === undefined ? s.rawKey : `${s.rawKey}=${s.rawValue}`));
}

/** Formats an exact URL from parts; values are already in wire form. */
export function formatUrl(origin: string, basePath: string, route: string, parts: string[], rawText?: string): string {
  const all = [...parts];
  if (rawText !== undefined) all.push(`raw=${rawText}`);
  return `${origin}${basePath}/${route}${all.length > 0 ? `?${all.join("&")}` : ""}`;
}

/** Builds a URL from decoded parameter values, encoding them with the reference encoder. */
export function buildUrl(
  origin: string,
  basePath: string,
  route: string,
  params: Array<[string, string | number | boolean]>,
  raw?: string,
): string {
  const parts = params.map(([k, v]) => `${k}=${encodeQueryValue(String(v))}`);
  return formatUrl(origin, basePath, route, parts, raw === undefined ? undefined : encodeUrlText(raw));
}

/** Applies deterministic corrections to the received URL, leaving everything else byte-identical. */
export function editRequestUrl(url: RequestUrl, edit: SegmentEdit): string {
  let segments = url.query.segments.map((s) => ({ rawKey: s.rawKey, rawValue: s.rawValue, key: s.key }));
  if (edit.rename) {
    const { from, to } = edit.rename;
    segments = segments.map((s) => (s.key === from ? { ...s, rawKey: to, key: to } : s));
  }
  if (edit.set) {
    const { key, value } = edit.set;
    segments = segments.map((s) => (s.key === key ? { ...s, rawValue: encodeQueryValue(value) } : s));
  }
  if (edit.drop) {
    const drop = new Set(edit.drop);
    segments = segments.filter((s) => !drop.has(s.key));
  }
  for (const [k, v] of edit.add ?? []) segments.push({ rawKey: k, rawValue: encodeQueryValue(v), key: k });
  const rawText = edit.rawText === null ? undefined : (edit.rawText ?? url.query.raw?.rawText);
  // The enc= declaration says how the kept bytes read; a corrected URL keeps it (last before raw=).
  const declaration = url.query.declaration;
  if (declaration && !edit.drop?.includes("enc"))
    segments.push({ rawKey: declaration.rawKey, rawValue: declaration.rawValue, key: "enc" });
  return formatUrl(
    url.origin,
    edit.basePath ?? url.basePath,
    edit.route ?? url.route,
    serializeSegments(segments),
    rawText,
  );
}
