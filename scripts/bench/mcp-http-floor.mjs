// A floor for the MCP bench, in its own process like the bridge (a stand-in server, not urlbridge): a bare node:http
// handler that speaks just enough stateless JSON-RPC for the official SDK client (initialize, 202 for
// notifications, 405 for GET) and answers every tools/call with the result bytes read from a file: the answer
// urlbridge gave to the same read. What the SDK client's HTTP leg costs with no server work behind it.
// Usage: node scripts/bench/mcp-http-floor.mjs <result-json-file>   (prints its URL)
import fs from "node:fs";
import http from "node:http";

const [resultFile] = process.argv.slice(2);
const result = fs.readFileSync(resultFile, "utf8");

function send(res, status, text) {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const server = http.createServer((req, res) => {
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST", "content-length": 0 });
    return res.end();
  }
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const message = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    if (message.id === undefined) {
      res.writeHead(202, { "content-length": 0 });
      return res.end();
    }
    const id = JSON.stringify(message.id);
    if (message.method === "initialize") {
      const init = {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: "floor", version: "0.0.0" },
      };
      return send(res, 200, `{"result":${JSON.stringify(init)},"jsonrpc":"2.0","id":${id}}`);
    }
    if (message.method === "tools/call") return send(res, 200, `{"result":${result},"jsonrpc":"2.0","id":${id}}`);
    send(res, 200, `{"result":{},"jsonrpc":"2.0","id":${id}}`);
  });
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${server.address().port}/mcp\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
