// Reads a small JSON request body; anything else is a 4xx with a clear code.
import type Koa from "koa";
import { ControlError, ControlErrorCode } from "./errors.js";

export const MAX_JSON_BODY_BYTES = 64 * 1024;

export async function readJsonBody(ctx: Koa.Context): Promise<unknown> {
  const type = ctx.get("content-type");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_JSON_BODY_BYTES)
      throw new ControlError(
        ControlErrorCode.bodyTooLarge,
        `Request body is larger than ${MAX_JSON_BODY_BYTES} bytes.`,
      );
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return {};
  if (!/^application\/json\b/i.test(type))
    throw new ControlError(ControlErrorCode.unsupportedMediaType, "Send the body as application/json.");
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new ControlError(ControlErrorCode.invalidJson, "The request body is not valid JSON.");
  }
}
