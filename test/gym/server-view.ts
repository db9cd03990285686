// What the data plane decodes from a request target, using the server's own transport functions: the
// client-error rescue for raw bytes Node refuses, then the raw-tail parser, the strict binder and the kernel's
// schema validation.
import { z } from "zod";
import { ToolError } from "../../server/errors.js";
import { validateInput } from "../../server/kernel/tool/validate-input.js";
import { bindQueryInput } from "../../server/url-grammar/bind.js";
import { hasUnencodedTargetBytes, percentEncodeTargetBytes } from "../../server/url-grammar/request-target.js";
import { parseRequestUrl, splitTarget, type RequestUrl } from "../../server/url-grammar/request-url.js";
import { declaredCarries, encoderCarries, type FormName } from "./forms.js";
import type { QueryRewrite } from "./intermediaries.js";

export const VIEW_ORIGIN = "http://gym.invalid";
export const VIEW_BASE = "/v0/AAAAAAAA";

/** Decodes a byte-string (latin1) request target the way the gateway does. */
export function serverRequest(target: string): RequestUrl {
  const bytes = Buffer.from(target, "latin1");
  const wire = hasUnencodedTargetBytes(bytes) ? percentEncodeTargetBytes(bytes) : target;
  return parseRequestUrl(VIEW_ORIGIN, VIEW_BASE, "w", splitTarget(wire).rawQuery);
}

// The shape of a content-carrying mutation (/w): a path parameter, a control parameter, raw= content.
const writeLikeSchema = z.object({
  path: z.string(),
  wait: z.number().int().min(0).max(1500).optional(),
  content: z.string(),
});
export type WriteLikeArgs = z.infer<typeof writeLikeSchema>;

export type Binding = { ok: true; args: WriteLikeArgs } | { ok: false; error: ToolError };

/** Binds a request target like a write route would: typed arguments, or the structured refusal. */
export function bindWriteLike(target: string): Binding {
  try {
    const url = serverRequest(target);
    const candidate = bindQueryInput({
      schema: writeLikeSchema,
      binding: { rawField: "content", controlNames: ["wait", "run", "call"] },
      url,
    });
    const args = validateInput<WriteLikeArgs>(writeLikeSchema, candidate, { rawField: "content" });
    return { ok: true, args };
  } catch (error) {
    if (error instanceof ToolError) return { ok: false, error };
    throw error;
  }
}

/**
 * Whether a (form, rewrite) pair can carry `text` at all. Three documented holes, all closed by the
 * reference encoder: a + written for a space cannot survive a proxy that percent-encodes + (the encoder
 * writes ~s), a literal & typed into the raw tail is split and reordered by a proxy that sorts the
 * query on & (the encoder writes ~a), and a proxy that rewrites %20 as + erases a space that was the only
 * evidence that an encoder's literal %XX is text (the encoder writes ~p).
 */
export function pairCarries(formName: FormName, rewrite: QueryRewrite, text: string): boolean {
  if (
    (formName === "agent-bytes" || formName === "form-urlencoded") &&
    (rewrite.name === "encode-all" || rewrite.name === "double-encode-all")
  )
    return !text.includes(" ");
  if (formName.startsWith("agent-") && rewrite.name === "sort-all") return !text.includes("&");
  // A proxy that turns %20 into + erases the spaces that proved a literal %XX was text, not an encoding.
  if ((formName === "percent-library" || formName === "python-quote") && rewrite.name === "plus-spaces")
    return encoderCarries(text, false);
  if (formName === "percent-declared" && rewrite.name === "plus-spaces") return declaredCarries(text, false);
  return true;
}
