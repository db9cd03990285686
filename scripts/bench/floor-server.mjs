// A floor for benchmarks, in its own process like the bridge: answers every request with the bytes of
// one file from a bare node:http handler.
// Usage: node scripts/bench/floor-server.mjs <body-file> <content-type>   (prints its URL)
import fs from "node:fs";
import http from "node:http";

const [bodyFile, contentType] = process.argv.slice(2);
const body = fs.readFileSync(bodyFile);
const server = http.createServer((_req, res) => {
  res.writeHead(200, { "content-type": contentType, "content-length": body.length });
  res.end(body);
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${server.address().port}/\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
