// Pieces the four tools share: id fields, the loose output schema (each action answers its own members beside
// ok and action), the journal behaviour of plugin mutations, and start-up recovery of an interrupted admission.
import { z } from "zod";
import { ErrorCode, type ToolFailure } from "../../../server/errors.js";
import type { InterruptedIntent, ToolResult } from "../../../server/kernel/tool/definition.js";
import type { Api } from "../api.js";

export const sessionIdField = z.string().regex(/^ses_[A-Za-z0-9]{1,64}$/, "an OpenCode session id (ses_...)");
export const messageIdField = z.string().regex(/^msg_[A-Za-z0-9]{1,64}$/, "an OpenCode message id (msg_...)");
export const directoryField = z
  .string()
  .min(1)
  .max(4096)
  .describe('A folder inside the project ("/project/sub" or "sub"); default: the project root.');

export const actionOutput = z.looseObject({ ok: z.literal(true), action: z.string() });

/** Checkpoint a mutation saves before its prompt leaves (workers.ts). */
interface AdmissionCheckpoint {
  directory: string;
  sessionId: string;
  messageId: string;
}

/**
 * Plugin mutations change OpenCode, not the project's files, so they neither queue behind file writes nor move the
 * project's state epoch. An intent a killed process left unfinished is settled by reading its exact message back.
 */
export function journalOf(api: Api) {
  return {
    serialize: false,
    bumpsEpoch: "never" as const,
    async recover(intent: InterruptedIntent): Promise<ToolResult | ToolFailure> {
      const checkpoint = intent.checkpoint as AdmissionCheckpoint | undefined;
      if (!checkpoint) {
        return {
          ok: false,
          errorCode: ErrorCode.interrupted,
          retryable: true,
          repairHint: "urlbridge stopped before this call sent anything to OpenCode; fetch the retry URL to run it.",
        };
      }
      try {
        const found = await api.message(checkpoint.directory, checkpoint.sessionId, checkpoint.messageId);
        return {
          ok: true,
          action: "recovered",
          sessionId: checkpoint.sessionId,
          messageId: checkpoint.messageId,
          admission: found ? "admitted" : "not-admitted",
        };
      } catch {
        return {
          ok: false,
          errorCode: ErrorCode.interrupted,
          retryable: false,
          repairHint: `urlbridge stopped while admitting prompt ${checkpoint.messageId} to session ${checkpoint.sessionId} and could not read it back; wait on that exact identity (opencode_worker wait) instead of sending it again.`,
          errorDetail: checkpoint,
        };
      }
    },
  };
}
