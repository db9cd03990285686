// FAKE (a process boundary we do not own): an OpenAI-compatible chat-completions server standing in for the LLM provider behind OpenCode.
// It streams canned completions the way OpenCode's bundled @ai-sdk/openai-compatible provider expects (SSE chunks on
// loopback between OpenCode and this fake; the bridge is never on this path). Tool calls happen on demand: a user
// message containing `TOOLCALL:<tool name> <json arguments>` makes the next completion ask for that tool; once
// the tool's result is in the conversation the fake answers with text quoting it. Every request is recorded so
// a test can see which tools reached the model and what they answered.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface MockLlmRequest {
  /** Tool names offered to the model in this completion request. */
  tools: string[];
  /** What the fake decided: a tool call (name + JSON arguments) or a text answer. */
  plan: { tool: string; args: string } | { text: string };
  /** Text of the last message when it is a tool result, else null. */
  toolResult: string | null;
}

export interface MockLlm {
  /** The base URL OpenCode's provider config takes (…/v1). */
  baseURL: string;
  requests: MockLlmRequest[];
  close(): Promise<void>;
}

interface ChatMessage {
  role: string;
  content?: string | Array<{ type?: string; text?: string }> | null;
}
interface ChatBody {
  model?: string;
  stream?: boolean;
  messages?: ChatMessage[];
  tools?: Array<{ function?: { name?: string } }>;
}

const textOf = (m: ChatMessage | undefined): string =>
  !m
    ? ""
    : typeof m.content === "string"
      ? m.content
      : Array.isArray(m.content)
        ? m.content.map((p) => p.text ?? "").join("")
        : "";

const DIRECTIVE = /TOOLCALL:(\S+) (\{.*\})/s;

function plan(body: ChatBody): MockLlmRequest {
  const messages = body.messages ?? [];
  const last = messages[messages.length - 1];
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const tools = (body.tools ?? []).map((t) => t.function?.name ?? "").filter(Boolean);
  const toolResult = last?.role === "tool" ? textOf(last) : null;
  if (toolResult !== null)
    return { tools, toolResult, plan: { text: `MOCK-DONE tool said: ${toolResult.slice(0, 2000)}` } };
  const directive = DIRECTIVE.exec(textOf(lastUser));
  if (!directive) return { tools, toolResult, plan: { text: `MOCK-REPLY to: ${textOf(lastUser).slice(0, 120)}` } };
  const [, name, args] = directive;
  // A tool the client did not offer would make OpenCode fail the turn obscurely; say so in the answer instead.
  if (!tools.includes(name!))
    return { tools, toolResult, plan: { text: `MOCK-NO-TOOL ${name} offered: ${tools.join(",")}` } };
  return { tools, toolResult, plan: { tool: name!, args: args! } };
}

export interface MockLlmOptions {
  /** Address to listen on: loopback by default; a container test passes its Docker network's gateway address. */
  host?: string;
}

export async function startMockLlm(options: MockLlmOptions = {}): Promise<MockLlm> {
  const host = options.host ?? "127.0.0.1";
  const requests: MockLlmRequest[] = [];
  let callCounter = 0;
  const server = http.createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += String(chunk);
    if (req.method === "GET" && req.url?.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "mock-model", object: "model" }] }));
      return;
    }
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(raw || "{}") as ChatBody;
    const decided = plan(body);
    requests.push(decided);
    const id = "chatcmpl-mock";
    const created = Math.floor(Date.now() / 1000);
    const model = body.model;
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    const callId = `call_${++callCounter}`;
    const p = decided.plan;
    if (!body.stream) {
      const message =
        "tool" in p
          ? {
              role: "assistant",
              content: null,
              tool_calls: [{ id: callId, type: "function", function: { name: p.tool, arguments: p.args } }],
            }
          : { role: "assistant", content: p.text };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id,
          object: "chat.completion",
          created,
          model,
          usage,
          choices: [{ index: 0, message, finish_reason: "tool" in p ? "tool_calls" : "stop" }],
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (delta: unknown, finish: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
      );
    send({ role: "assistant", content: "" });
    if ("tool" in p) {
      send({ tool_calls: [{ index: 0, id: callId, type: "function", function: { name: p.tool, arguments: "" } }] });
      send({ tool_calls: [{ index: 0, function: { arguments: p.args } }] });
      send({}, "tool_calls");
    } else {
      for (const piece of p.text.match(/[\s\S]{1,64}/g) ?? []) send({ content: piece });
      send({}, "stop");
    }
    res.write(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`,
    );
    res.end("data: [DONE]\n\n");
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://${host.includes(":") ? `[${host}]` : host}:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
