// A floor for benchmarks, in its own process like the bridge: answers every request with the bytes of
// one file, from a bare node:http handler or from the same handler behind a one-middleware Koa app with
// ctx.respond = false (the shell the data plane runs in, server/gateway/koa-shell.ts).
// Usage: node scripts/bench/floor-server.mjs <body-file> <content-type> [bare|koa]   (prints its URL)
import fs from "node:fs";
import http from "node:http";
import Koa from "koa";

const [bodyFile, contentType, kind = "bare"] = process.argv.slice(2);
const body = fs.readFileSync(bodyFile);
const answer = (_req, res) => {
  res.writeHead(200, { "content-type": contentType, "content-length": body.length });
  res.end(body);
};

function koaPassThrough() {
  const app = new Koa();
  app.silent = true;
  app.use(function passThrough(ctx) {
    ctx.respond = false;
    answer(ctx.req, ctx.res);
  });
  return app.callback();
}

if (kind !== "bare" && kind !== "koa") throw new Error(`floor kind must be bare or koa, not ${kind}`);
const server = http.createServer(kind === "koa" ? koaPassThrough() : answer);
server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${server.address().port}/\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
