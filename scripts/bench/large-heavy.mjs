// The heavy session of the head-of-line bench (large.ts), in its own process as another agent would be: it pages a
// 16 MiB file by 128 KiB pages and, at the same time, edits a 10 MB file (each edit a new version), until its stdin
// says "stop" or closes; then it prints {"pages","edits"} on stdout and exits. Its own JSON parses of 133 KB pages
// thus run on its own event loop, not on the one that times the other session's reads. Loopback only, bounded.
// Usage: node scripts/bench/large-heavy.mjs <r-base> <m-base>   (prints "ready", later the counts)

const PAGE = 128 * 1024;
/** Stops on its own after this long even if the parent never says so (the bench's window is well under it). */
const MAX_RUN_MS = 10 * 60 * 1000;

const [rBase, mBase] = process.argv.slice(2);
for (const base of [rBase, mBase]) {
  const host = base === undefined ? "" : new URL(base).hostname;
  if (host !== "127.0.0.1" && host !== "localhost" && host !== "[::1]")
    throw new Error(`large-heavy.mjs talks to a bridge on loopback only, not ${String(base)}`);
}

const query = (params) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join("&");

async function getJson(target) {
  const body = await (await fetch(target)).json();
  if (body.ok !== true) throw new Error(`heavy session request failed: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

let busy = true;
let pages = 0;
let edits = 0;
const stop = () => (busy = false);
const deadline = setTimeout(stop, MAX_RUN_MS);
process.stdin.on("data", (chunk) => {
  if (String(chunk).includes("stop")) stop();
});
process.stdin.on("end", stop);

const firstPage = `${rBase}/r?${query({ path: "sixteen.log", offset: 1, max: PAGE })}`;
const pager = (async () => {
  let next = firstPage;
  while (busy) {
    const body = await getJson(next);
    pages++;
    next = typeof body.next === "string" ? body.next : firstPage;
  }
})();
const editor = (async () => {
  let current = "0000000001";
  while (busy) {
    // A new version every time, as an agent's edits are: none is already in the review record.
    const next = `E${String(edits).padStart(9, "0")}`;
    await getJson(`${mBase}/e?${query({ path: "ten.log", old: current, run: edits })}&raw=${next}`);
    current = next;
    edits++;
  }
})();
process.stdout.write("ready\n");
await Promise.all([pager, editor]);
clearTimeout(deadline);
process.stdout.write(`${JSON.stringify({ pages, edits })}\n`);
process.stdin.destroy();
