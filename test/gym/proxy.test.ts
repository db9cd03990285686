// The hostile proxies do what the matrix says they do: checked against a byte-level upstream that records
// every request line it receives, so a gym pass can never come from a proxy that quietly did nothing.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryRewrite } from "./intermediaries.js";
import { intermediary } from "./matrix.js";
import { startHostileProxy, type ProxyOptions } from "./proxy.js";
import { parseRequestHead, wireGet, writeResponse } from "./wire-http.js";

interface Upstream {
  origin: string;
  targets: string[];
  close(): Promise<void>;
}

/** Answers every GET with a 4 KiB body after `delayMs`, recording the target bytes it received. */
async function startRecordingUpstream(delayMs = 0): Promise<Upstream> {
  const targets: string[] = [];
  const server = net.createServer((socket) => {
    let head = Buffer.alloc(0);
    socket.on("data", (chunk) => {
      head = Buffer.concat([head, chunk]);
      if (head.indexOf("\r\n\r\n") === -1) return;
      targets.push(parseRequestHead(head)!.target);
      setTimeout(
        () => writeResponse(socket, 200, { "Content-Type": "text/plain" }, Buffer.from("é".repeat(2048))),
        delayMs,
      );
    });
    socket.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    targets,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function throughProxy(options: ProxyOptions, target: string, delayMs = 0) {
  const upstream = await startRecordingUpstream(delayMs);
  const proxy = await startHostileProxy(upstream.origin, options);
  try {
    const res = await wireGet(proxy.origin, target);
    await proxy.close();
    return { res, targets: upstream.targets, stats: proxy.stats };
  } finally {
    await upstream.close();
  }
}

describe("hostile proxies", () => {
  it("forwards raw non-ASCII and rewrites only the query", async () => {
    const raw = Buffer.from("/v0/tok/w?path=a b&raw=é~n%41", "utf8").toString("latin1");
    const identity = await throughProxy({}, raw);
    expect(identity.targets).toEqual([raw]);
    const encoded = await throughProxy({ rewrite: queryRewrite("encode-all") }, "/v0/tok/w?path=a.txt&raw=~n+%41");
    expect(encoded.targets).toEqual(["/v0/tok/w?path=a.txt&raw=%7En%2B%41"]);
  });

  it.each([
    ["plus-spaces", "raw=a%20b c", "raw=a+b+c"],
    ["hex-lower", "raw=%C3%A9", "raw=%c3%a9"],
    ["normalize-unreserved", "raw=%7e%41%2f", "raw=~A%2F"],
    ["double-encode", "raw=%22~a b", "raw=%2522~a%20b"],
    ["double-encode-all", "raw=~n", "raw=%257En"],
    ["encode-nothing", "raw=%C3%A9%22%20%23%26", 'raw=\u00c3\u00a9"%20%23%26'],
    ["reorder-before-raw", "path=a&wait=1&raw=x&y", "wait=1&path=a&raw=x&y"],
    ["sort-all", "wait=1&path=a&raw=x", "path=a&raw=x&wait=1"],
  ])("%s rewrites ?%s into ?%s", (name, query, expected) => {
    expect(queryRewrite(name).rewrite(query)).toBe(expected);
  });

  it("truncates answers after the configured bytes", async () => {
    const { res } = await throughProxy(intermediary("truncate-3k").proxy, "/x");
    expect(res.body.length).toBe(3 * 1024);
  });

  it.each([
    ["duplicate-sequential", 2, 0],
    ["duplicate-parallel", 3, 0],
    ["retry-slow", 2, 150],
    ["redirect-replay", 2, 0],
  ])("%s sends one reader request upstream %i times", async (name, copies, delayMs) => {
    const proxy = intermediary(name).proxy;
    const upstream = await startRecordingUpstream(delayMs);
    const hostile = await startHostileProxy(upstream.origin, proxy);
    const first = await wireGet(hostile.origin, "/v0/tok/x?raw=id");
    const followed = first.status === 307 ? await wireGet(hostile.origin, first.headers.location!) : first;
    await hostile.close();
    await upstream.close();
    expect(followed.status).toBe(200);
    expect(upstream.targets).toEqual(Array.from({ length: copies }, () => "/v0/tok/x?raw=id"));
  });

  it("redirects to /hop and forwards the followed request unchanged", async () => {
    const upstream = await startRecordingUpstream();
    const hostile = await startHostileProxy(upstream.origin, intermediary("redirect").proxy);
    const first = await wireGet(hostile.origin, "/v0/tok/t?path=%C3%A9");
    expect(first.status).toBe(307);
    expect(first.headers.location).toBe("/hop/v0/tok/t?path=%C3%A9");
    expect(upstream.targets).toEqual([]);
    await wireGet(hostile.origin, first.headers.location!);
    await hostile.close();
    await upstream.close();
    expect(upstream.targets).toEqual(["/v0/tok/t?path=%C3%A9"]);
  });
});

describe("hostile proxies in front of the bridge", () => {
  // Imported lazily so the pure proxy tests above need no bridge.
  let gym: Awaited<ReturnType<typeof import("./harness.js").startGym>>;
  beforeAll(async () => {
    const { startGym } = await import("./harness.js");
    gym = await startGym({
      intermediaries: [intermediary("duplicate-parallel"), intermediary("client-timeout")],
      readers: ["fetch"],
    });
  });
  afterAll(async () => gym?.close());

  it.each(["duplicate-parallel", "client-timeout"])(
    "makes the bridge see repeated mutation GETs (%s) that join one execution",
    async (name) => {
      const { CASE_KINDS } = await import("./cases.js");
      const { form } = await import("./forms.js");
      const result = await gym.run({
        id: `dup-${name}`,
        kind: CASE_KINDS.find((k) => k.name === "terminal-echo")!,
        text: "once",
        source: "proxy-test",
        form: form("reference"),
        reader: "fetch",
        intermediary: intermediary(name),
      });
      expect(result).toMatchObject({ outcome: "exact", passed: true, executions: 1 });
      const rows = gym.bridge.bridge.store.activity.list({ sessionId: gym.session.sessionId, afterId: 0, limit: 1000 });
      const forCall = rows.filter((r) => r.callId === result.callId);
      expect(forCall.filter((r) => r.dedupe === "new")).toHaveLength(1);
      expect(forCall.filter((r) => r.dedupe === "joined" || r.dedupe === "replayed").length).toBeGreaterThan(0);
    },
  );
});
