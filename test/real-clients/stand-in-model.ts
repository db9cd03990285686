// STAND-IN (a process boundary we do not own): the model providers behind the real agent clients, on loopback.
// One server speaks the four wire protocols the tested clients use, streamed as the real APIs stream them:
//   Anthropic Messages       POST /v1/messages (server-sent events)                          Claude Code
//   OpenAI Responses         POST /v1/responses (server-sent events)                         Codex CLI
//   Gemini                   POST /v1beta/models/<m>:streamGenerateContent?alt=sse, :generateContent  Gemini CLI
//   OpenAI chat completions  POST /v1/chat/completions (server-sent events)                  OpenCode
// Every request carries the whole conversation; the stand-in rebuilds the (call, result) pairs from it and asks
// scenario.ts for the next call, so it plays the same scripted agent for every client. It records the longest
// history it saw: what the model received, for the suite's assertions. Requests that offer none of the bridge's
// tools (titles, summaries, Gemini's next-speaker check) get a short text.
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { nextCall, type Exchange } from "./scenario.js";

export interface StandInModel {
  /** http://127.0.0.1:<port> */
  origin: string;
  /** The longest conversation seen: every scripted call with what the client handed back for it. */
  history(): Exchange[];
  /** The tool names the client offered in its last scripted request. */
  offeredTools(): string[];
  /** One line per request, for a failing test's message. */
  log(): string[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
const DONE_TEXT = "All scripted steps ran.";
/** What the stand-in asks Codex's tool_search, in turn, until it finds the bridge's tools. */
const SEARCH_QUERIES = ["read file edit write patch shell command", "mcp__$server", "$server"];

/** The client's name for a bridge tool: `mcp__<server>__read` (Claude), `mcp_<server>_read` (Gemini), `<server>_read` (OpenCode). */
function offeredName(offered: string[], server: string, tool: string): string | undefined {
  const candidates = [
    `mcp__${server}__${tool}`,
    `mcp_${server}_${tool}`,
    `${server}_${tool}`,
    `${server}__${tool}`,
    tool,
  ];
  return candidates.find((c) => offered.includes(c));
}

/** The bridge tool a client-side name stands for (inverse of offeredName). */
function bridgeTool(name: string, server: string): string {
  for (const prefix of [`mcp__${server}__`, `mcp_${server}_`, `${server}__`, `${server}_`])
    if (name.startsWith(prefix)) return name.slice(prefix.length);
  return name;
}

const textOfBlocks = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content
          .map((b) =>
            typeof b === "string" ? b : (b as Json).type === "text" ? String((b as Json).text) : JSON.stringify(b),
          )
          .join("\n")
      : JSON.stringify(content);

function sse(res: http.ServerResponse, events: Array<[string | undefined, unknown]>): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [event, data] of events)
    res.write(`${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  res.end();
}

export async function startStandInModel(options: { serverName: string }): Promise<StandInModel> {
  const server = options.serverName;
  const codexNamespace = `mcp__${server.replace(/-/g, "_")}`;
  let longest: Exchange[] = [];
  let offered: string[] = [];
  const lines: string[] = [];
  let n = 0;

  /** Keeps the longest history seen and answers the next scripted call, or undefined when done. */
  const decide = (history: Exchange[], tools: string[]) => {
    if (history.length >= longest.length) longest = history;
    offered = tools;
    const call = nextCall(history);
    lines.push(
      `#${n} history=${history.length} next=${call ? `${call.step}:${call.tool}` : "done"} last=${history.at(-1)?.raw.slice(0, 160) ?? ""}`,
    );
    return call;
  };

  function anthropic(body: Json, res: http.ServerResponse): void {
    const tools = ((body.tools as Json[] | undefined) ?? []).map((t) => String(t.name));
    const messages = (body.messages as Json[] | undefined) ?? [];
    const uses = new Map<string, { name: string; input: Json }>();
    const history: Exchange[] = [];
    for (const m of messages) {
      if (!Array.isArray(m.content)) continue;
      for (const b of m.content as Json[]) {
        if (b.type === "tool_use") uses.set(String(b.id), { name: String(b.name), input: b.input as Json });
        if (b.type === "tool_result") {
          const use = uses.get(String(b.tool_use_id));
          if (use && use.name !== "ToolSearch")
            history.push({ tool: bridgeTool(use.name, server), args: use.input, raw: textOfBlocks(b.content) });
        }
      }
    }
    // Claude Code 2.1.328 defers MCP tools: it offers ToolSearch and names the servers (still connecting, or their
    // tools) in the prompt. The stand-in loads the scenario's tools with ToolSearch once, then calls them by name.
    const everything = JSON.stringify(body);
    const searches = [...uses.values()].filter((u) => u.name === "ToolSearch").length;
    const named = everything.includes(`mcp__${server}__`) || everything.includes(`\\n${server}\\n`);
    const scripted = tools.some((t) => t.startsWith(`mcp__${server}__`)) || (tools.includes("ToolSearch") && named);
    let block: Json;
    if (!scripted) {
      lines.push(`anthropic side request: tools=${tools.join(",")}`);
      if (process.env.STANDIN_DUMP)
        fs.writeFileSync(`${process.env.STANDIN_DUMP}.${n}.json`, JSON.stringify(body, null, 1));
      block = { type: "text", text: "stand-in: side request" };
    } else {
      const call = decide(history, tools);
      if (!call) block = { type: "text", text: DONE_TEXT };
      else {
        const name =
          offeredName(tools, server, call.tool) ?? (searches > 0 ? `mcp__${server}__${call.tool}` : undefined);
        const select = ["read", "edit", "patch", "shell", "write", "shell_output", "mutation_result"].map(
          (t) => `mcp__${server}__${t}`,
        );
        if (name) block = { type: "tool_use", id: `toolu_standin_${++n}`, name, input: call.args };
        else
          block = {
            type: "tool_use",
            id: `toolu_standin_${++n}`,
            name: "ToolSearch",
            input: { query: `select:${select.join(",")}`, max_results: select.length },
          };
      }
    }
    const id = `msg_standin_${++n}`;
    const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const stop = block.type === "tool_use" ? "tool_use" : "end_turn";
    const start = block.type === "tool_use" ? { ...block, input: {} } : { type: "text", text: "" };
    const delta =
      block.type === "tool_use"
        ? { type: "input_json_delta", partial_json: JSON.stringify(block.input) }
        : { type: "text_delta", text: block.text };
    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id,
          type: "message",
          role: "assistant",
          model: body.model,
          content: [block],
          stop_reason: stop,
          stop_sequence: null,
          usage,
        }),
      );
      return;
    }
    sse(res, [
      [
        "message_start",
        {
          type: "message_start",
          message: {
            id,
            type: "message",
            role: "assistant",
            model: body.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage,
          },
        },
      ],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: start }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      [
        "message_delta",
        { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } },
      ],
      ["message_stop", { type: "message_stop" }],
    ]);
  }

  function openaiResponses(body: Json, res: http.ServerResponse): void {
    const tools: string[] = [];
    const collect = (list: Json[]) => {
      for (const t of list) {
        if (Array.isArray(t.tools))
          for (const u of t.tools as Json[])
            tools.push(`${String(t.name)}::${String(u.name ?? (u.function as Json | undefined)?.name)}`);
        else tools.push(String(t.name ?? t.type));
      }
    };
    collect((body.tools as Json[] | undefined) ?? []);
    const input = Array.isArray(body.input) ? (body.input as Json[]) : [];
    const calls = new Map<string, { name: string; args: Json }>();
    const history: Exchange[] = [];
    let searched = false;
    let searches = 0;
    for (const item of input) {
      if (item.type === "function_call")
        calls.set(String(item.call_id), {
          name: String(item.name),
          args: JSON.parse(String(item.arguments || "{}")) as Json,
        });
      if (item.type === "function_call_output") {
        const call = calls.get(String(item.call_id));
        if (call) history.push({ tool: call.name, args: call.args, raw: textOfBlocks(item.output) });
      }
      // Codex defers MCP tools behind a client-side tool_search: what it found comes back as tools to offer.
      if (item.type === "tool_search_output") {
        searches++;
        searched = searched || ((item.tools as Json[] | undefined) ?? []).length > 0;
        collect((item.tools as Json[] | undefined) ?? []);
      }
    }
    const scripted =
      tools.some((t) => t.startsWith(`${codexNamespace}::`)) ||
      (tools.includes("tool_search") &&
        !searched &&
        searches < SEARCH_QUERIES.length &&
        JSON.stringify(body).includes(server));
    if (!scripted) {
      lines.push(`responses side request: tools=${tools.join(",")}`);
      if (process.env.STANDIN_DUMP)
        fs.writeFileSync(`${process.env.STANDIN_DUMP}.responses.${n}.json`, JSON.stringify(body, null, 1));
    }
    let item: Json;
    const rid = `resp_standin_${++n}`;
    const call = scripted ? decide(history, tools) : undefined;
    if (call && tools.includes(`${codexNamespace}::${call.tool}`)) {
      item = {
        type: "function_call",
        id: `fc_standin_${n}`,
        call_id: `call_standin_${n}`,
        namespace: codexNamespace,
        name: call.tool,
        arguments: JSON.stringify(call.args),
        status: "completed",
      };
    } else if (call && tools.includes("tool_search") && !searched && searches < SEARCH_QUERIES.length) {
      const query = SEARCH_QUERIES[searches]!.replace("$server", server);
      item = {
        type: "tool_search_call",
        id: `ts_standin_${n}`,
        call_id: `call_standin_${n}`,
        status: "completed",
        execution: "client",
        arguments: { query, limit: 20 },
      };
    } else {
      const text = !scripted
        ? "stand-in: side request"
        : call
          ? `stand-in: ${call.tool} is not offered (${tools.join(", ")})`
          : DONE_TEXT;
      item = {
        type: "message",
        id: `msg_standin_${n}`,
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text, annotations: [] }],
      };
    }
    const usage = {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 15,
    };
    const base = {
      id: rid,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      model: body.model,
      status: "in_progress",
      output: [],
    };
    const events: Array<[string, unknown]> = [
      ["response.created", { type: "response.created", sequence_number: 0, response: base }],
      [
        "response.output_item.added",
        {
          type: "response.output_item.added",
          sequence_number: 1,
          output_index: 0,
          item: { ...item, status: "in_progress" },
        },
      ],
    ];
    if (item.type === "message") {
      const text = ((item.content as Json[])[0] as Json).text;
      events.push([
        "response.output_text.delta",
        {
          type: "response.output_text.delta",
          sequence_number: 2,
          item_id: item.id,
          output_index: 0,
          content_index: 0,
          delta: text,
        },
      ]);
    }
    events.push([
      "response.output_item.done",
      { type: "response.output_item.done", sequence_number: 3, output_index: 0, item },
    ]);
    events.push([
      "response.completed",
      {
        type: "response.completed",
        sequence_number: 4,
        response: { ...base, status: "completed", output: [item], usage },
      },
    ]);
    sse(res, events);
  }

  function gemini(body: Json, res: http.ServerResponse, stream: boolean): void {
    const tools: string[] = [];
    for (const t of (body.tools as Json[] | undefined) ?? [])
      for (const d of (t.functionDeclarations as Json[] | undefined) ?? []) tools.push(String(d.name));
    const history: Exchange[] = [];
    const pending: Array<{ name: string; args: Json }> = [];
    for (const c of (body.contents as Json[] | undefined) ?? []) {
      for (const p of (c.parts as Json[] | undefined) ?? []) {
        if (p.functionCall)
          pending.push({
            name: String((p.functionCall as Json).name),
            args: ((p.functionCall as Json).args ?? {}) as Json,
          });
        if (p.functionResponse) {
          const call = pending.shift();
          if (call)
            history.push({
              tool: bridgeTool(call.name, server),
              args: call.args,
              raw: JSON.stringify((p.functionResponse as Json).response),
            });
        }
      }
    }
    const scripted = tools.some((t) => t.startsWith(`mcp_${server}_`));
    let part: Json;
    if (!scripted)
      part = {
        text: stream ? "stand-in: side request" : JSON.stringify({ reasoning: "stand-in", next_speaker: "user" }),
      };
    else {
      const call = decide(history, tools);
      const name = call && offeredName(tools, server, call.tool);
      part =
        call && name
          ? { functionCall: { name, args: call.args } }
          : { text: call ? `stand-in: ${call.tool} is not offered` : DONE_TEXT };
    }
    const payload = {
      candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: String(body.model ?? "gemini-stand-in"),
      responseId: `gem_standin_${++n}`,
    };
    if (!stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(payload));
      return;
    }
    sse(res, [[undefined, payload]]);
  }

  function chatCompletions(body: Json, res: http.ServerResponse): void {
    const tools = ((body.tools as Json[] | undefined) ?? []).map((t) =>
      String((t.function as Json | undefined)?.name ?? ""),
    );
    const calls = new Map<string, { name: string; args: Json }>();
    const history: Exchange[] = [];
    for (const m of (body.messages as Json[] | undefined) ?? []) {
      for (const tc of (m.tool_calls as Json[] | undefined) ?? []) {
        const fn = tc.function as Json;
        calls.set(String(tc.id), { name: String(fn.name), args: JSON.parse(String(fn.arguments || "{}")) as Json });
      }
      if (m.role === "tool") {
        const call = calls.get(String(m.tool_call_id));
        if (call) history.push({ tool: bridgeTool(call.name, server), args: call.args, raw: textOfBlocks(m.content) });
      }
    }
    const scripted = tools.some((t) => t.startsWith(`${server}_`));
    const call = scripted ? decide(history, tools) : undefined;
    const name = call && offeredName(tools, server, call.tool);
    const id = `chatcmpl-standin-${++n}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: unknown, finish: string | null = null) => ({
      id,
      object: "chat.completion.chunk",
      created,
      model: body.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const events: Array<[undefined, unknown]> = [[undefined, chunk({ role: "assistant", content: "" })]];
    if (call && name) {
      events.push([
        undefined,
        chunk({
          tool_calls: [
            {
              index: 0,
              id: `call_standin_${n}`,
              type: "function",
              function: { name, arguments: JSON.stringify(call.args) },
            },
          ],
        }),
      ]);
      events.push([undefined, chunk({}, "tool_calls")]);
    } else {
      events.push([
        undefined,
        chunk({ content: !scripted ? "Stand-in title" : call ? `stand-in: ${call.tool} is not offered` : DONE_TEXT }),
      ]);
      events.push([undefined, chunk({}, "stop")]);
    }
    events.push([
      undefined,
      {
        id,
        object: "chat.completion.chunk",
        created,
        model: body.model,
        choices: [],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      },
    ]);
    events.push([undefined, "[DONE]"]);
    sse(res, events);
  }

  const httpServer = http.createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += String(chunk);
    const path = (req.url ?? "").split("?")[0]!;
    let body: Json;
    try {
      body = raw ? (JSON.parse(raw) as Json) : {};
    } catch {
      body = {};
    }
    try {
      if (req.method === "POST" && path.endsWith("/messages/count_tokens")) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ input_tokens: 100 }));
      } else if (req.method === "POST" && path.endsWith("/messages")) anthropic(body, res);
      else if (req.method === "POST" && path.endsWith("/responses")) openaiResponses(body, res);
      else if (req.method === "POST" && path.endsWith(":streamGenerateContent")) gemini(body, res, true);
      else if (req.method === "POST" && path.endsWith(":generateContent")) gemini(body, res, false);
      else if (req.method === "POST" && path.endsWith(":countTokens"))
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ totalTokens: 100 }));
      else if (req.method === "POST" && path.endsWith("/chat/completions")) chatCompletions(body, res);
      else if (path.endsWith("/models"))
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ object: "list", data: [], models: [] }));
      else {
        lines.push(`unhandled ${req.method} ${req.url}`);
        res
          .writeHead(404, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { type: "not_found_error", message: "stand-in: no such route" } }));
      }
    } catch (error) {
      lines.push(`error ${String((error as Error).stack ?? error)}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    history: () => longest,
    offeredTools: () => offered,
    log: () => lines,
    close: () =>
      new Promise<void>((resolve) => {
        httpServer.closeAllConnections();
        httpServer.close(() => resolve());
      }),
  };
}
