// Readers that send what the agent typed (curl sends raw UTF-8; some send raw spaces) hit Node's HTTP
// parser, which refuses such targets before our app runs. The data plane re-encodes and serves them.
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reencodeRequestHead } from "../../server/gateway/client-error.js";
import { startTestBridge, type AgentSession, type TestBridge } from "../helpers/bridge.js";
import { wireGet } from "./wire-http.js";

const bytes = (text: string) => Buffer.from(text, "utf8").toString("latin1");

/** Sends raw bytes in the given pieces (pausing between them) and returns the whole answer. */
function sendPieces(origin: string, pieces: Buffer[], pauseMs = 60): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (d) => chunks.push(d));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.on("connect", async () => {
      for (const piece of pieces) {
        socket.write(piece);
        await new Promise((r) => setTimeout(r, pauseMs));
      }
    });
  });
}

describe("reencodeRequestHead", () => {
  const head = (line: string, headers = "Host: a\r\nConnection: keep-alive\r\n") =>
    Buffer.from(`${line}\r\n${headers}\r\n`, "latin1");

  it("percent-encodes raw bytes of the target and closes the connection after the answer", () => {
    const packet = head(`GET ${bytes("/v0/t/w?raw=é b")} HTTP/1.1`);
    expect(reencodeRequestHead(packet, 14)?.toString("latin1")).toBe(
      "GET /v0/t/w?raw=%C3%A9%20b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    );
  });

  it("finds the request line the error is in, after an earlier request in the same packet", () => {
    const packet = Buffer.concat([head("GET /ok HTTP/1.1"), head(`GET ${bytes("/v0/t/r?path=ü")} HTTP/1.1`)]);
    const at = packet.indexOf(Buffer.from("\u00c3", "latin1"));
    expect(reencodeRequestHead(packet, at)?.toString("latin1")).toMatch(/^GET \/v0\/t\/r\?path=%C3%BC HTTP\/1\.1\r\n/);
  });

  it.each([
    ["a head cut before its end", Buffer.from(`GET ${bytes("/x?a=é")} HTTP/1.1\r\nHost: a\r\n`, "latin1"), 9],
    ["a packet that starts inside the target", Buffer.from(`${bytes("é")} HTTP/1.1\r\nHost: a\r\n\r\n`, "latin1"), 0],
    ["a method other than GET", head(`POST ${bytes("/x?a=é")} HTTP/1.1`), 10],
    ["a target with nothing to re-encode", head("GET /x?a=b HTTP/1.1"), 5],
  ])("gives up on %s", (_name, packet, at) => {
    expect(reencodeRequestHead(packet, at)).toBeUndefined();
  });
});

describe("raw request bytes on the data plane", () => {
  let t: TestBridge;
  let s: AgentSession;
  let base: string;
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, terminal: false });
    base = new URL(s.r).pathname;
    fs.writeFileSync(path.join(t.projectDir, "café ☕ 😀.txt"), "x");
  });
  afterAll(async () => t.close());

  it("serves a target with raw UTF-8 bytes exactly as if the reader had percent-encoded them", async () => {
    const res = await wireGet(t.bridge.dataUrl, bytes(`${base}/t?path=café ☕ 😀.txt`));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString("utf8"))).toMatchObject({
      ok: true,
      exists: true,
      path: "/project/café ☕ 😀.txt",
    });
  });

  it("writes raw UTF-8 content to disk byte for byte", async () => {
    const text = "Grüße, 世界 😀~nline 2 ";
    const res = await wireGet(
      t.bridge.dataUrl,
      bytes(`${new URL(s.m!).pathname}/w?path=raw-utf8.txt&raw=${text.replace(/ /g, "+")}`),
    );
    expect(JSON.parse(res.body.toString("utf8"))).toMatchObject({ ok: true });
    expect(fs.readFileSync(path.join(t.projectDir, "raw-utf8.txt"), "utf8")).toBe("Grüße, 世界 😀\nline 2 ");
  });

  it("answers a request line split across packets with a JSON hint when the start is gone", async () => {
    const target = bytes(`${base}/t?path=é`);
    const answer = await sendPieces(t.bridge.dataUrl, [
      Buffer.from(`GET ${target.slice(0, -2)}`, "latin1"),
      Buffer.from(`${target.slice(-2)} HTTP/1.1\r\nHost: a\r\n\r\n`, "latin1"),
    ]);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({
      ok: false,
      errorCode: "malformed_request_target",
    });
  });

  it("keeps Node's own answers for every other parse error", async () => {
    const answer = await sendPieces(t.bridge.dataUrl, [Buffer.from("GARBAGE\r\n\r\n")]);
    expect(answer).toBe("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    const huge = await sendPieces(t.bridge.dataUrl, [
      Buffer.from(`GET /x HTTP/1.1\r\nX: ${"a".repeat(70 * 1024)}\r\n\r\n`),
    ]);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
  });

  it("still answers the earlier request on a keep-alive connection before rescuing the next", async () => {
    const answer = await sendPieces(t.bridge.dataUrl, [
      Buffer.from(
        `GET ${base}/t?path=. HTTP/1.1\r\nHost: a\r\n\r\nGET ${bytes(`${base}/t?path=café ☕ 😀.txt`)} HTTP/1.1\r\nHost: a\r\n\r\n`,
        "latin1",
      ),
    ]);
    expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 200", "HTTP/1.1 200"]);
    expect(answer.indexOf('"path":"/project"')).toBeLessThan(answer.indexOf('"path":"/project/café ☕ 😀.txt"'));
  });
});
