// STAND-IN (a process boundary we do not own): an OpenAI-compatible chat-completions server in place of the LLM provider behind a real `opencode serve`.
// It streams canned answers the way OpenCode's bundled @ai-sdk/openai-compatible provider reads them. In the last
// user message, `TOOLCALL:<tool> <json>` asks for that tool (then the answer quotes its result) and `HOLD:<tag>`
// keeps the request open, unanswered, until release(tag) or close(). Every request is logged with the tools that
// OpenCode offered, so a test sees the worker's real tool ceiling. Unlike test/e2e/support/mock-llm.ts (the
// container suites' copy), it can hold an answer back, which the reconcile and busy tests need.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ProviderRequest {
  tools: string[];
  lastUser: string;
  answer: string;
}

export interface MockProvider {
  baseURL: string;
  requests: ProviderRequest[];
  /** Requests for a user text containing `needle`. */
  requestsFor(needle: string): ProviderRequest[];
  /** Answers the held requests of a tag (with text `MOCK-RELEASED <tag>`). */
  release(tag: string): void;
  held(): string[];
  close(): Promise<void>;
}

interface ChatMessage {
  role: string;
  content?: string | Array<{ type?: string; text?: string }> | null;
}

const textOf = (m: ChatMessage | undefined): string =>
  !m
    ? ""
    : typeof m.content === "string"
      ? m.content
      : Array.isArray(m.content)
        ? m.content.map((p) => p.text ?? "").join("")
        : "";

export async function startMockProvider(): Promise<MockProvider> {
  const requests: ProviderRequest[] = [];
  const holds = new Map<string, Array<() => void>>();
  let calls = 0;
  const server = http.createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += String(chunk);
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(raw || "{}") as {
      model?: string;
      messages?: ChatMessage[];
      tools?: Array<{ function?: { name?: string } }>;
    };
    const messages = body.messages ?? [];
    const last = messages[messages.length - 1];
    const lastUser = textOf([...messages].reverse().find((m) => m.role === "user"));
    const tools = (body.tools ?? []).map((t) => t.function?.name ?? "").filter(Boolean);
    // A title request (OpenCode's small model names the session) is answered plainly and not held.
    const isTitle = messages.some((m) => m.role === "system" && /title/i.test(textOf(m))) && tools.length === 0;
    let toolCall: { name: string; args: string } | undefined;
    let answer: string;
    const directive = /TOOLCALL:(\S+) (\{.*\})/s.exec(lastUser);
    const hold = /HOLD:(\S+)/.exec(lastUser);
    if (last?.role === "tool") answer = `MOCK-DONE tool said: ${textOf(last).slice(0, 500)}`;
    else if (!isTitle && directive && tools.includes(directive[1]!)) {
      toolCall = { name: directive[1]!, args: directive[2]! };
      answer = `TOOLCALL ${directive[1]}`;
    } else answer = isTitle ? "Mock title" : `MOCK-REPLY to: ${lastUser.slice(0, 200)}`;
    if (!isTitle) requests.push({ tools, lastUser, answer });
    if (!isTitle && hold && last?.role !== "tool") {
      await new Promise<void>((resolve) => {
        const list = holds.get(hold[1]!) ?? [];
        list.push(resolve);
        holds.set(hold[1]!, list);
        res.once("close", resolve);
      });
      if (res.destroyed) return;
      answer = `MOCK-RELEASED ${hold[1]}`;
    }
    const id = `chatcmpl-${++calls}`;
    const created = Math.floor(Date.now() / 1000);
    const send = (delta: unknown, finish: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
      );
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    send({ role: "assistant", content: "" });
    if (toolCall) {
      send({
        tool_calls: [
          {
            index: 0,
            id: `call_${calls}`,
            type: "function",
            function: { name: toolCall.name, arguments: toolCall.args },
          },
        ],
      });
      send({}, "tool_calls");
    } else {
      send({ content: answer });
      send({}, "stop");
    }
    res.write(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`,
    );
    res.end("data: [DONE]\n\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    requestsFor: (needle) => requests.filter((r) => r.lastUser.includes(needle)),
    release(tag) {
      for (const resolve of holds.get(tag) ?? []) resolve();
      holds.delete(tag);
    },
    held: () => [...holds.keys()],
    close: () =>
      new Promise<void>((resolve) => {
        for (const list of holds.values()) for (const resolve of list) resolve();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
