// A floor for benchmarks, in its own process like the bridge: answers every request with the bytes of
// one file. `koa` as the third argument serves them from a one-middleware Koa app instead of bare node:http.
// Usage: node scripts/bench/floor-server.mjs <body-file> <content-type> [koa]   (prints its URL)
import fs from "node:fs";
import http from "node:http";
import Koa from "koa";

const [bodyFile, contentType, mode] = process.argv.slice(2);
const body = fs.readFileSync(bodyFile);
let handler = (_req, res) => {
  res.writeHead(200, { "content-type": contentType, "content-length": body.length });
  res.end(body);
};
if (mode === "koa") {
  const app = new Koa();
  app.use((ctx) => {
    ctx.type = contentType;
    ctx.body = body;
  });
  handler = app.callback();
}
const server = http.createServer(handler);
server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${server.address().port}/\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
