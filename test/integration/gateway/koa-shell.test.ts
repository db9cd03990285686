import fs from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDataPlaneShell } from "../../../server/gateway/koa-shell.js";
import { createLogger } from "../../../server/log.js";
import { startTestBridge, type TestBridge } from "../../helpers/bridge.js";
import { rawExchange } from "../../helpers/raw-http.js";

// The data plane runs behind a Koa shell (server/gateway/koa-shell.ts). These are the exact bytes the bare
// node:http listener sent before it (recorded through the bridge at 64b407f; since then wrong_capability_base
// is retryable:false, by the error catalog of issue 11 item 3), Date aside: Koa must add, drop or reorder
// nothing, on answers, opaque 404s, 405s, HEAD, the clientError rescue, pipelining and 500s.

interface Vars {
  host: string;
  r: string;
  m: string;
  init: string;
}

const CRLF = "\r\n";

/** One answer as the listener writes it: agent headers in their order, then Node's Date and Connection. */
function agentAnswer(status: string, body: string, connection = ["Connection: close"], sentBody = body): string {
  return [
    `HTTP/1.1 ${status}`,
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body, "utf8")}`,
    "Cache-Control: no-store",
    "X-Content-Type-Options: nosniff",
    "Referrer-Policy: no-referrer",
    "Date: {DATE}",
    ...connection,
    "",
    sentBody,
  ].join(CRLF);
}

const OPAQUE_404 = '{"ok":false,"errorCode":"not_found"}';
const METHOD_NOT_ALLOWED = [
  "HTTP/1.1 405 Method Not Allowed",
  "Allow: GET",
  "Content-Length: 0",
  "Cache-Control: no-store",
  "Date: {DATE}",
  "Connection: close",
  "",
  "",
].join(CRLF);

function readAnswer(name: string, content: string, fingerprint: string): string {
  const p = `/project/${name}`;
  const size = Buffer.byteLength(content, "utf8");
  return (
    `{"ok":true,"requestedPaths":["${p}"],"returnedPaths":["${p}"],"allComplete":true,"completePaths":["${p}"],"incompletePaths":[],"unreturnedPaths":[],` +
    `"files":[{"path":"${p}","kind":"file","encoding":"utf-8","newline":"lf","size":${size},"fingerprint":"${fingerprint}","totalLines":1,"startLine":1,"endLine":1,"content":${JSON.stringify(content)},"complete":true,"rangeComplete":true}]}`
  );
}

const READ_A = readAnswer("a.txt", "hello\n", "5891b5b522d5df086d0ff0b110fbd9d2");
const READ_ACCENT = readAnswer("é.txt", "accent\n", "8f8df9963c9628741bfeeac7efb73916");

const get = (target: string, v: Vars, extra = "Connection: close\r\n") =>
  `GET ${target} HTTP/1.1\r\nHost: ${v.host}\r\n${extra}\r\n`;

const CASES: Array<{ name: string; request: (v: Vars) => string | Buffer; expected: (v: Vars) => string }> = [
  { name: "GET / (opaque 404)", request: (v) => get("/", v), expected: () => agentAnswer("404 Not Found", OPAQUE_404) },
  {
    name: "GET /api/projects (opaque 404)",
    request: (v) => get("/api/projects", v),
    expected: () => agentAnswer("404 Not Found", OPAQUE_404),
  },
  {
    name: "GET with an unknown token (opaque 404)",
    request: (v) => get("/v0/AAAAAAAA/r?path=a.txt", v),
    expected: () => agentAnswer("404 Not Found", OPAQUE_404),
  },
  {
    name: "HTTP/1.0 GET /",
    request: () => "GET / HTTP/1.0\r\n\r\n",
    expected: () => agentAnswer("404 Not Found", OPAQUE_404),
  },
  {
    name: "GET /r of a file (200)",
    request: (v) => get(`/v0/${v.r}/r?path=a.txt`, v),
    expected: () => agentAnswer("200 OK", READ_A),
  },
  {
    name: "GET /w on the read base (200, wrong_capability_base repair)",
    request: (v) => get(`/v0/${v.r}/w?path=x.txt&raw=y`, v),
    expected: (v) =>
      agentAnswer(
        "200 OK",
        `{"ok":false,"errorCode":"wrong_capability_base","retryable":false,"errorDetail":{"tool":"write","expectedBase":"m"},"repairHint":"/w (write) belongs on the mutation base. Fetch the repair URL.","agentAction":"fetch_repair","repair":"http://${v.host}/v0/${v.m}/w?path=x.txt&raw=y"}`,
      ),
  },
  {
    name: "HEAD on a capability (opaque 404, no body)",
    request: (v) => `HEAD /v0/${v.r}/r?path=a.txt HTTP/1.1\r\nHost: ${v.host}\r\nConnection: close\r\n\r\n`,
    expected: () => agentAnswer("404 Not Found", OPAQUE_404, undefined, ""),
  },
  {
    name: "HEAD / (opaque 404, no body)",
    request: (v) => `HEAD / HTTP/1.1\r\nHost: ${v.host}\r\nConnection: close\r\n\r\n`,
    expected: () => agentAnswer("404 Not Found", OPAQUE_404, undefined, ""),
  },
  {
    name: "POST (405)",
    request: (v) =>
      `POST /v0/${v.r}/r?path=a.txt HTTP/1.1\r\nHost: ${v.host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    expected: () => METHOD_NOT_ALLOWED,
  },
  {
    name: "DELETE / (405)",
    request: (v) => `DELETE / HTTP/1.1\r\nHost: ${v.host}\r\nConnection: close\r\n\r\n`,
    expected: () => METHOD_NOT_ALLOWED,
  },
  {
    name: "GET with raw UTF-8 in the target (clientError rescue, re-encoded and served)",
    request: (v) =>
      Buffer.concat([
        Buffer.from(`GET /v0/${v.r}/r?path=`),
        Buffer.from("é.txt", "utf8"),
        Buffer.from(` HTTP/1.1\r\nHost: ${v.host}\r\n\r\n`),
      ]),
    expected: () => agentAnswer("200 OK", READ_ACCENT),
  },
  {
    name: "a request line Node cannot parse (clientError 400)",
    request: () => "GARBAGE\r\n\r\n",
    expected: () => "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n",
  },
  {
    name: "two pipelined GETs on a keep-alive connection",
    request: (v) => `${get("/api", v, "")}${get(`/v0/${v.r}/r?path=a.txt`, v)}`,
    expected: () =>
      agentAnswer("404 Not Found", OPAQUE_404, ["Connection: keep-alive", "Keep-Alive: timeout=5"]) +
      agentAnswer("200 OK", READ_A),
  },
];

/** The bytes as latin1 text (one char per byte) with Node's Date value, the only moving part, blanked. */
function normalized(bytes: Buffer): string {
  return bytes.toString("latin1").replace(/\r\nDate: [^\r]*\r\n/g, "\r\nDate: {DATE}\r\n");
}

const asBytes = (text: string) => Buffer.from(text, "utf8").toString("latin1");

describe("the data plane's Koa shell", () => {
  let t: TestBridge;
  let vars: Vars;

  beforeAll(async () => {
    t = await startTestBridge();
    fs.writeFileSync(path.join(t.projectDir, "a.txt"), "hello\n");
    fs.writeFileSync(path.join(t.projectDir, "é.txt"), "accent\n");
    const s = await t.session({ write: true });
    const tokenOf = (url: string) => new URL(url).pathname.split("/").filter(Boolean).at(-1)!;
    vars = { host: new URL(t.bridge.dataUrl).host, r: tokenOf(s.r), m: tokenOf(s.m!), init: tokenOf(s.initUrl) };
  });
  afterAll(async () => t.close());

  it.each(CASES)("sends the bare listener's exact bytes: $name", async ({ request, expected }) => {
    const answer = await rawExchange(t.bridge.dataUrl, request(vars));
    expect(normalized(answer)).toBe(asBytes(expected(vars)));
  });

  // Last: it closes the store under the running bridge.
  it("sends the bare listener's exact 500 when the gateway fails outside any tool (a closed store)", async () => {
    t.bridge.store.close();
    const answer = await rawExchange(t.bridge.dataUrl, get(`/v0/init/${vars.init}`, vars));
    const body =
      '{"ok":false,"errorCode":"internal_error","repairHint":"The bridge hit an unexpected error; the operator can see it in the server log. Retrying the same URL is safe.","retryable":true,"agentAction":"wait_and_retry"}';
    expect(normalized(answer)).toBe(asBytes(agentAnswer("500 Internal Server Error", body)));
  });
});

describe("errors the Koa shell sees", () => {
  const ANSWER_DELAY_MS = 50;
  const READERS = 3;

  it("logs a reader that hung up mid-answer at debug, never through Koa's console.error handler", async () => {
    const lines: string[] = [];
    const consoleError = vi.spyOn(console, "error");
    // Answers late, so each reader below is gone before its answer is written.
    const listener: http.RequestListener = (_req, res) => {
      setTimeout(() => res.end("late"), ANSWER_DELAY_MS);
    };
    const server = http.createServer(
      createDataPlaneShell({ listener, log: createLogger("debug", (line) => lines.push(line)) }).callback(),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      for (let i = 0; i < READERS; i++) {
        const socket = net.connect(port, "127.0.0.1");
        await new Promise((resolve) => socket.once("connect", resolve));
        socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        await new Promise((resolve) => setTimeout(resolve, ANSWER_DELAY_MS / 5));
        socket.resetAndDestroy();
      }
      // Bounded wait for the server side to see the resets and the late answers to fire.
      for (let i = 0; i < 100 && lines.length < READERS; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, ANSWER_DELAY_MS * 2));
      expect(lines.filter((l) => / error /.test(l))).toEqual([]);
      expect(lines.filter((l) => / debug data plane reader hung up mid-answer /.test(l)).length).toBe(READERS);
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      consoleError.mockRestore();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
