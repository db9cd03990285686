// A floor for the /e benchmark, in its own process like the bridge: a bare node:http server (no framework, no
// routing, no validation, no database) that does a durable edit of one file per GET, the way the bridge's file
// tools do it: read, replace, temp file created and written, fsync in the thread pool, rename, directory fsync
// in the pool, then the answer. With "journaled", each edit also appends one record to a log file and fsyncs it
// beside the temp file's fsync, both before the rename: the least a write-ahead journal can add to an edit. With
// "sync", the fsyncs run on the event loop as the in-process floor's do (a server that does this makes every other
// request wait behind each fsync, which issue 18 rules out for the bridge).
// GET /?from=<text>&to=<text> answers {"ok":true}.
// Usage: node scripts/bench/edit-floor-server.mjs <file> [plain|journaled|sync]   (prints its URL)
import fs from "node:fs";
import http from "node:http";
import path from "node:path";

const [file, kind = "plain"] = process.argv.slice(2);
if (!["plain", "journaled", "sync"].includes(kind))
  throw new Error(`edit floor kind must be plain, journaled or sync, not ${kind}`);
const dir = path.dirname(file);
const temp = path.join(dir, `.${path.basename(file)}.edit-floor-tmp`);
const log =
  kind === "journaled" ? fs.openSync(path.join(dir, `.${path.basename(file)}.edit-floor-log`), "a") : undefined;
const answer = Buffer.from('{"ok":true}\n');

const fsync =
  kind === "sync"
    ? (fd) => {
        fs.fsyncSync(fd);
        return Promise.resolve();
      }
    : (fd) => new Promise((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve())));

async function edit(from, to, n) {
  // The record's fsync starts first, as the bridge's commit does, and overlaps the temp file's.
  let logged = Promise.resolve();
  if (log !== undefined) {
    fs.writeSync(log, `${JSON.stringify({ n, path: file, from, to })}\n`);
    logged = fsync(log);
  }
  const text = fs.readFileSync(file, "utf8");
  const fd = fs.openSync(temp, "wx", 0o644);
  try {
    fs.writeSync(fd, text.replace(from, to));
    await Promise.all([fsync(fd), logged]);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, file);
  const dirFd = fs.openSync(dir, "r");
  try {
    await fsync(dirFd);
  } finally {
    fs.closeSync(dirFd);
  }
}

let count = 0;
const server = http.createServer((req, res) => {
  const query = new URL(req.url ?? "/", "http://floor").searchParams;
  edit(query.get("from") ?? "", query.get("to") ?? "", count++).then(
    () => {
      res.writeHead(200, { "content-type": "application/json", "content-length": answer.length });
      res.end(answer);
    },
    (error) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(error));
    },
  );
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${server.address().port}/\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
