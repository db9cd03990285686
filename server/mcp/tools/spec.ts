// The shape of one MCP tool: its OpenCode-style name and strict input schema, the kernel tool it adapts, and a
// call that translates MCP arguments into the kernel's candidate input and renders the kernel's answer.
import type { ContentBlock, ToolAnnotations } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { AnyToolDefinition, ToolContext } from "../../kernel/tool/definition.js";
import type { CandidateInput, MaybePromise, RunOutcome } from "../../tool/run-tool.js";
import { mcpWorded } from "../wording.js";

/** What a tool call may do with the kernel: run a kernel tool by id, all bounds, permissions and the journal applied. */
export interface McpCall {
  /**
   * Runs kernel tool `toolId` with candidate input. A journaled mutation gets this tools/call's identity (the
   * client's idempotency key as call=, else a fresh run= nonce) and is awaited until it finishes or a bound passes.
   * A read the kernel answers synchronously comes back synchronously (call-tool.ts callTool).
   */
  run(toolId: string, input: CandidateInput, options?: { settleMs?: number }): MaybePromise<RunOutcome>;
  /** The context the kernel runs with (project root, session state): for the few reads a rendering needs. */
  ctx: ToolContext;
  /** True when the client gave an idempotency key: a retry must answer the recorded result. */
  keyed: string | undefined;
}

/** A tool's answer before it becomes a CallToolResult: the kernel body is structuredContent. */
export interface McpAnswer {
  body: Record<string, unknown>;
  text: string;
  /** Content blocks placed before the text (an image). */
  content?: ContentBlock[];
}

export interface McpToolSpec {
  name: string;
  /** The kernel tool this adapts: its capability and permission decide whether the tool is listed. */
  kernel: string;
  title: string;
  description: string;
  input: z.ZodObject;
  /** Input fields whose values are content: the activity log keeps only their size. */
  contentFields: readonly string[];
  annotations: ToolAnnotations;
  /** The zod schema of structuredContent on success; defaults to wireOutputOf(the kernel tool). */
  output?: (kernelTools: (id: string) => AnyToolDefinition | undefined) => z.ZodType;
  /** May answer synchronously when its kernel run did (read): the MCP socket then answers without a microtask hop. */
  call(args: Record<string, unknown>, call: McpCall): MaybePromise<McpAnswer>;
}

/**
 * The foreground bound: longest one tools/call (shell, edit, write, patch, mutation_result) takes from its
 * arrival to its answer. Still unfinished then, it answers `running` with `next`, the mutation_result call that
 * waits the same bound again. Below the tightest default tool timeout of the tested clients, the official SDK
 * clients' 60 s request timeout (docs/MCP.md "Long commands"), with 10 s to spare for the network.
 */
export const MAX_SETTLE_MS = 50_000;

/**
 * Most bytes a default call's answer (its structuredContent JSON, and its text) should take, so that it reaches
 * each tested client's model whole: Codex 0.169 keeps ~12 KB of a result and cuts the middle of anything longer;
 * Claude Code 2.1.328 passes ~46 KB inline (docs/MCP.md "Budgets").
 */
export const MCP_ANSWER_BUDGET_BYTES = 10 * 1024;

/** Longest text rendering; the structured body stays whole (the kernel bounded it already). */
export const MAX_TEXT_CHARS = 64 * 1024;

export function isFailure(body: Record<string, unknown>): boolean {
  return body.ok === false;
}

/** Text of a structured failure: code, what to do next, and the agent action, so a text-only client can act. */
export function failureText(body: Record<string, unknown>): string {
  const lines = [`Error ${String(body.errorCode)}: ${String(body.repairHint ?? "the call failed.")}`];
  if (body.agentAction) lines.push(`agentAction: ${String(body.agentAction)}`);
  if (body.errorDetail !== undefined) lines.push(`detail: ${clip(JSON.stringify(body.errorDetail), 2000)}`);
  return lines.join("\n");
}

export function clip(text: string, max = MAX_TEXT_CHARS): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}\n… (${text.length - max} more characters; structuredContent has the whole answer)`;
}

/** The answer worded for MCP (wording.ts): failures rendered as failureText, successes by `render`. */
export function answerOf(outcome: RunOutcome, render: (body: Record<string, unknown>) => string): McpAnswer {
  const body = mcpWorded(outcome.body as Record<string, unknown>);
  if (isFailure(body)) return { body, text: failureText(body) };
  if (body.state === "pending" || body.state === "running") return { body, text: unfinishedText(body) };
  return { body, text: clip(render(body)) };
}

export function unfinishedText(body: Record<string, unknown>): string {
  return `Still ${String(body.state)} (callId ${String(body.callId)}). Call mutation_result with callId "${String(body.callId)}" for its outcome; do not repeat the call.`;
}

/** Compact JSON for tools whose answer has no better text form. */
export function jsonText(body: Record<string, unknown>): string {
  const { ok: _ok, ...rest } = body;
  return JSON.stringify(rest);
}
