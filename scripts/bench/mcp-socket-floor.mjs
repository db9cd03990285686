// A floor for the MCP bench's stdio group, in its own process like the bridge (a stand-in, not urlbridge): listens
// on <dir>/mcp.sock, speaks the relay's socket protocol (server/mcp/socket-protocol.ts: hello, ready), and answers
// every tools/call with the result bytes read from a file, urlbridge's answer to the same read. `urlbridge mcp`
// pointed at it (URLBRIDGE_STATE_DIR=<dir>) is the stdio relay's leg alone, with no server work behind it.
// Usage: node scripts/bench/mcp-socket-floor.mjs <dir> <result-json-file>   (prints "ready")
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

const [dir, resultFile] = process.argv.slice(2);
const result = fs.readFileSync(resultFile, "utf8");

const server = net.createServer((socket) => {
  let buffered = "";
  let greeted = false;
  socket.on("data", (chunk) => {
    buffered += chunk.toString("utf8");
    let newline;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (!greeted) {
        greeted = true;
        socket.write(`${JSON.stringify({ "urlbridge/ready": { v: 1 } })}\n`);
        continue;
      }
      const message = JSON.parse(line);
      if (message.id === undefined) continue;
      const id = JSON.stringify(message.id);
      if (message.method === "initialize") {
        const init = {
          protocolVersion: message.params.protocolVersion,
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: "floor", version: "0.0.0" },
        };
        socket.write(`{"result":${JSON.stringify(init)},"jsonrpc":"2.0","id":${id}}\n`);
      } else if (message.method === "tools/call") socket.write(`{"result":${result},"jsonrpc":"2.0","id":${id}}\n`);
      else socket.write(`{"result":{},"jsonrpc":"2.0","id":${id}}\n`);
    }
  });
  socket.on("error", () => socket.destroy());
});
server.listen(path.join(dir, "mcp.sock"), () => process.stdout.write("ready\n"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
