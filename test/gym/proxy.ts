// A hostile intermediary as a real HTTP proxy on port 0 in front of the data plane: it rewrites the
// request target, truncates answers, repeats requests behind the client's back, or redirects.
// It speaks HTTP/1.1 over node:net because node:http refuses the raw bytes some readers send.
import net from "node:net";
import { type QueryRewrite, rewriteTarget } from "./intermediaries.js";
import { parseRequestHead, wireGet, writeResponse, type WireResponse } from "./wire-http.js";

export interface ProxyOptions {
  rewrite?: QueryRewrite;
  /** Cut every answer body after this many bytes, as a reader that shows only the first ~3 KiB. */
  truncateBytes?: number;
  /** Send each request upstream this many times, one after another or all at once. */
  duplicates?: { mode: "sequential" | "parallel"; copies: number };
  /** When upstream has not answered within this many ms, send the request again (a hidden retry). */
  retrySlowAfterMs?: number;
  /** follow: answer 307 to /hop/<target>, then forward that. forward-then-redirect: forward first too. */
  redirect?: "follow" | "forward-then-redirect";
}

export interface HostileProxy {
  origin: string;
  /** Requests the proxy received from readers, and requests it sent upstream. */
  stats: { received: number; forwarded: number };
  close(): Promise<void>;
}

const HOP_PREFIX = "/hop";
const MAX_HEAD_BYTES = 64 * 1024;

export async function startHostileProxy(upstream: string, options: ProxyOptions): Promise<HostileProxy> {
  const stats = { received: 0, forwarded: 0 };
  const pending = new Set<Promise<unknown>>();

  const forward = (target: string): Promise<WireResponse> => {
    stats.forwarded += 1;
    const request = wireGet(upstream, target);
    pending.add(request);
    void request.then(
      () => pending.delete(request),
      () => pending.delete(request),
    );
    return request;
  };

  async function answer(target: string): Promise<WireResponse> {
    if (options.duplicates?.mode === "sequential") {
      let last: WireResponse | undefined;
      for (let i = 0; i < options.duplicates.copies; i++) last = await forward(target);
      return last!;
    }
    if (options.duplicates?.mode === "parallel") {
      const all = await Promise.all(Array.from({ length: options.duplicates.copies }, () => forward(target)));
      return all[all.length - 1]!;
    }
    if (options.retrySlowAfterMs !== undefined) {
      const first = forward(target);
      const slow = new Promise<"slow">((resolve) => setTimeout(() => resolve("slow"), options.retrySlowAfterMs));
      const winner = await Promise.race([first, slow]);
      return winner === "slow" ? Promise.race([first, forward(target)]) : winner;
    }
    return forward(target);
  }

  async function handle(socket: net.Socket, rawTarget: string): Promise<void> {
    stats.received += 1;
    const hopped = rawTarget.startsWith(`${HOP_PREFIX}/`);
    const target = rewriteTarget(
      hopped ? rawTarget.slice(HOP_PREFIX.length) : rawTarget,
      options.rewrite ?? { name: "identity", description: "", contract: "exact", rewrite: (q) => q },
    );
    if (options.redirect && !hopped) {
      if (options.redirect === "forward-then-redirect") await answer(target);
      writeResponse(socket, 307, { Location: `${HOP_PREFIX}${rawTarget}` }, Buffer.alloc(0));
      return;
    }
    const res = await answer(target);
    const body = options.truncateBytes !== undefined ? res.body.subarray(0, options.truncateBytes) : res.body;
    const headers: Record<string, string> = {};
    if (res.headers["content-type"]) headers["Content-Type"] = res.headers["content-type"];
    if (res.headers.location) headers.Location = res.headers.location;
    writeResponse(socket, res.status, headers, body);
  }

  const server = net.createServer((socket) => {
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end === -1) {
        if (buffered.length > MAX_HEAD_BYTES) socket.destroy();
        return;
      }
      socket.off("data", onData);
      const head = parseRequestHead(buffered.subarray(0, end));
      if (!head || head.method !== "GET") {
        writeResponse(socket, 405, {}, Buffer.alloc(0));
        return;
      }
      const work = handle(socket, head.target).catch(() => socket.destroy());
      pending.add(work);
      void work.then(() => pending.delete(work));
    };
    socket.on("data", onData);
    socket.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;

  return {
    origin: `http://127.0.0.1:${port}`,
    stats,
    async close() {
      await Promise.allSettled([...pending]);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
