// A tool's staged-content fields as the journal runner resolves them before naming the call: each declared
// blob=/count= pair becomes the staged text in its `into` field (journal-runner.ts; the blobs: staging.ts).
import { ErrorCode, ToolError } from "../../errors.js";
import type { AnyToolDefinition, ToolContext } from "../../kernel/tool/definition.js";
import { resolveStagedContent } from "./staging.js";

/** Replaces each declared blob=/count= pair by the staged text in its `into` field; the content is then required. */
export function resolveStagedFields(
  tool: AnyToolDefinition,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Record<string, unknown> {
  const fields = tool.journal?.stagedContent;
  if (!fields) return args;
  const out = { ...args };
  for (const { blob, count, into, required } of fields) {
    const blobId = out[blob];
    const declared = out[count];
    delete out[blob];
    delete out[count];
    if (typeof blobId !== "string") {
      if (declared !== undefined) {
        throw new ToolError(
          ErrorCode.missingParameter,
          `${count}= describes a staged blob; give ${blob}=<id> with it, or drop ${count}=.`,
          {
            detail: { parameter: blob },
            repair: ctx.urls.repair({ drop: [count] }),
          },
        );
      }
      if (out[into] === undefined && (required?.(out) ?? true)) {
        const spellings = [into, ...(tool.url.rawField === into ? ["raw="] : []), `${blob}=<id>`];
        throw new ToolError(
          ErrorCode.missingParameter,
          `Missing ${into}: give it as ${spellings.join(" or ")}.${tool.example ? ` Example: ${tool.example}` : ""}`,
          {
            detail: { parameter: into },
          },
        );
      }
      continue;
    }
    if (out[into] !== undefined) {
      throw new ToolError(ErrorCode.conflictingParameters, `${into} was given both inline and as ${blob}=; keep one.`, {
        detail: { parameters: [into, blob] },
      });
    }
    out[into] = resolveStagedContent(ctx, blobId, typeof declared === "number" ? declared : undefined);
  }
  return out;
}
