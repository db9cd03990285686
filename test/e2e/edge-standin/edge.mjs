// Stand-in for the Cloudflare quick-tunnel edge and cloudflared's metrics server, for test/e2e only (nothing ships it).
// Terminates TLS on :8443 and forwards each request, its target byte for byte, to the bridge's data plane, behaving
// as a quick tunnel does (../shared/notes/sandbox-and-edge.md): no Server-Sent Events (cut or buffered), 524 when the
// origin has not answered within the timeout (100 s, EDGE_TIMEOUT_MS), 414 for a target over 32 KB, 429 past
// ~200 requests in flight, cf-ray and cf-connecting-ip added and hop-by-hop headers stripped. :2000 answers
// /quicktunnel and /ready like cloudflared's metrics server. Node's standard library only.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";

const env = process.env;
const int = (name, fallback) => {
  const value = env[name] === undefined || env[name] === "" ? fallback : Number(env[name]);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`edge stand-in: ${name} must be a positive integer, not ${env[name]}`);
  return value;
};

export const config = {
  origin: new URL(env.EDGE_ORIGIN ?? "http://bridge:47432"),
  hostname: env.EDGE_HOSTNAME ?? "e2e-edge.trycloudflare.com",
  /** cut (default): an event stream's events are renamed, so no SSE client sees one; buffer: held until the stream ends; pass. */
  sse: env.EDGE_SSE ?? "cut",
  /** Cloudflare answers 524 when the origin sends no response headers within 100 s. */
  timeoutMs: int("EDGE_TIMEOUT_MS", 100_000),
  /** A quick tunnel carries about 200 requests in flight; the next ones are refused. */
  maxInFlight: int("EDGE_MAX_IN_FLIGHT", 200),
  /** Cloudflare refuses a request target (path and query) over 32 KB with 414. */
  maxTargetBytes: int("EDGE_MAX_TARGET_BYTES", 32 * 1024),
  tlsPort: int("EDGE_TLS_PORT", 8443),
  metricsPort: int("EDGE_METRICS_PORT", 2000),
};
if (!["cut", "buffer", "pass"].includes(config.sse)) {
  console.error(`edge stand-in: EDGE_SSE must be cut, buffer or pass, not ${config.sse}`);
  process.exit(64);
}

const ACCESS_LOG = "/tmp/edge-access.log";
/** RFC 9110 §7.6.1 connection-specific fields, which a proxy never forwards. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);
const upstreamAgent = new http.Agent({ keepAlive: true });
let inFlight = 0;

function endToEnd(headers) {
  const named = new Set(
    String(headers.connection ?? "")
      .toLowerCase()
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name) && !named.has(name)));
}

const newRay = () => `${randomBytes(8).toString("hex")}-E2E`;
const clientIp = (req) => (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");

function log(req, status, contentType) {
  const pathOnly = req.url.split("?")[0];
  const sse = /text\/event-stream/i.test(contentType ?? "") ? "event-stream" : "";
  fs.appendFile(
    ACCESS_LOG,
    `${req.method} ${pathOnly} ${status} ct=${contentType ?? ""} sse=${sse}\n`,
    () => undefined,
  );
}

/** An answer the edge makes itself (414, 429, 502, 524): Cloudflare's own short HTML page. */
function edgeAnswer(req, res, ray, status, title) {
  log(req, status, "text/html");
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, {
    "content-type": "text/html; charset=UTF-8",
    "cf-ray": ray,
    server: "cloudflare",
    "cache-control": "no-store",
  });
  res.end(
    `<!DOCTYPE html><title>${status}: ${title}</title><h1>Error ${status}</h1><p>${title}</p><p>Ray ID: ${ray}</p>\n`,
  );
}

function forward(req, res) {
  const ray = newRay();
  if (Buffer.byteLength(req.url, "latin1") > config.maxTargetBytes)
    return edgeAnswer(req, res, ray, 414, "URI Too Long");
  if (inFlight >= config.maxInFlight) return edgeAnswer(req, res, ray, 429, "Too Many Requests");
  inFlight += 1;
  let done = false;
  const finish = () => {
    if (!done) {
      done = true;
      inFlight -= 1;
    }
  };
  res.on("close", finish);

  const headers = {
    ...endToEnd(req.headers),
    "cf-ray": ray,
    "cf-connecting-ip": clientIp(req),
    "cf-visitor": '{"scheme":"https"}',
    "x-forwarded-for": clientIp(req),
    "x-forwarded-proto": "https",
  };
  const upstream = http.request({
    host: config.origin.hostname,
    port: config.origin.port || 80,
    method: req.method,
    path: req.url,
    headers,
    agent: upstreamAgent,
  });
  const timer = setTimeout(() => {
    upstream.destroy();
    edgeAnswer(req, res, ray, 524, "A timeout occurred");
  }, config.timeoutMs);
  upstream.on("error", () => {
    clearTimeout(timer);
    if (!res.writableEnded) edgeAnswer(req, res, ray, 502, "Bad gateway");
  });
  upstream.on("response", (answer) => {
    clearTimeout(timer);
    const contentType = answer.headers["content-type"];
    const out = { ...endToEnd(answer.headers), "cf-ray": ray, server: "cloudflare" };
    const eventStream = /text\/event-stream/i.test(contentType ?? "");
    log(req, answer.statusCode, contentType);
    if (!eventStream || config.sse === "pass") {
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
      return;
    }
    const chunks = [];
    // Cut mode renames every data: field. Fields start lines, so only whole lines are rewritten and sent; a
    // line split across chunks waits in `carry` for its end.
    let carry = "";
    const cut = (text) => text.replace(/^data:/gm, "cut-by-edge-standin:");
    answer.on("data", (chunk) => {
      if (config.sse === "buffer") chunks.push(chunk);
      else {
        if (!res.headersSent) res.writeHead(answer.statusCode ?? 502, { ...out, "x-edge-standin-cut": "event-stream" });
        const text = carry + chunk.toString("utf8");
        const end = text.lastIndexOf("\n") + 1;
        carry = text.slice(end);
        if (end > 0) res.write(cut(text.slice(0, end)));
      }
    });
    answer.on("end", () => {
      if (config.sse === "buffer") {
        const body = Buffer.concat(chunks);
        delete out["content-length"];
        res.writeHead(answer.statusCode ?? 502, {
          ...out,
          "content-length": body.length,
          "x-edge-standin-buffered": "event-stream",
        });
        res.end(body);
      } else {
        if (!res.headersSent) res.writeHead(answer.statusCode ?? 502, { ...out, "x-edge-standin-cut": "event-stream" });
        res.end(cut(carry));
      }
    });
    answer.on("error", () => res.destroy());
  });
  req.pipe(upstream);
  res.on("close", () => {
    clearTimeout(timer);
    if (!res.writableFinished) upstream.destroy();
  });
}

const tls = { key: fs.readFileSync("/etc/edge/edge.key"), cert: fs.readFileSync("/etc/edge/edge.crt") };
// Larger than the 32 KB target limit, so an oversized target reaches forward() and gets the edge's own 414.
https
  .createServer({ ...tls, maxHeaderSize: 128 * 1024, keepAliveTimeout: 60_000 }, forward)
  .listen(config.tlsPort, "0.0.0.0");

const READY = { status: 200, readyConnections: 1, connectorId: "00000000-0000-4000-8000-0000000000e2" };
http
  .createServer((req, res) => {
    const json = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    // cloudflared reports the quick-tunnel hostname without a scheme; the bridge trusts only <label>.trycloudflare.com.
    if (req.url === "/quicktunnel") return json(200, { hostname: config.hostname });
    if (req.url === "/ready") return json(200, READY);
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("404 page not found\n");
  })
  .listen(config.metricsPort, "0.0.0.0");

// What this run enforces, for tests to read (they cannot see the environment from outside).
fs.writeFileSync("/tmp/edge-config.json", JSON.stringify({ ...config, origin: config.origin.href }));
console.error(
  `edge stand-in: https :${config.tlsPort} -> ${config.origin.href}, metrics :${config.metricsPort}, sse=${config.sse}, timeout ${config.timeoutMs} ms`,
);
