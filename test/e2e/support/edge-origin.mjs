// Stand-in origin behind the edge stand-in, for test/e2e/edge-standin.test.ts only: echoes what the edge forwarded,
// answers late, streams Server-Sent Events and holds requests open until told, so the edge's behaviour can be seen.
import http from "node:http";

let held = [];
let sseWrote = 0;
let releaseSse;

const json = (res, status, body) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

http
  .createServer({ maxHeaderSize: 128 * 1024 }, (req, res) => {
    const url = new URL(req.url, "http://origin");
    switch (url.pathname) {
      case "/echo":
        return json(res, 200, { url: req.url, targetBytes: Buffer.byteLength(req.url), headers: req.headers });
      case "/slow":
        return void setTimeout(
          () => json(res, 200, { slept: Number(url.searchParams.get("ms")) }),
          Number(url.searchParams.get("ms")),
        );
      case "/hold":
        return void held.push(res);
      case "/held":
        return json(res, 200, { held: held.length });
      case "/release":
        for (const r of held) json(r, 200, { released: true });
        held = [];
        return json(res, 200, { ok: true });
      case "/sse":
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.write("data: one\n\n");
        sseWrote = 1;
        releaseSse = () => {
          res.end("data: two\n\n");
          sseWrote = 2;
        };
        return;
      case "/sse-state":
        return json(res, 200, { wrote: sseWrote });
      case "/sse-release":
        releaseSse?.();
        return json(res, 200, { ok: true });
      default:
        return json(res, 404, { error: "no such route" });
    }
  })
  .listen(8080, "0.0.0.0");
