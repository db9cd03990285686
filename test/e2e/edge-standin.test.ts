// The edge stand-in (test/e2e/edge-standin/) behaves like a Cloudflare quick tunnel, seen from both sides: a client
// on the host over TLS, and an origin stand-in (support/edge-origin.mjs) that shows what the edge forwarded. The
// limits are the real ones scaled down through its variables, so nothing waits 100 s.
import https from "node:https";
import path from "node:path";
import { Network, Wait, type StartedNetwork, type StartedTestContainer } from "testcontainers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildEdgeImage,
  e2eName,
  EDGE_IMAGE,
  EDGE_TLS_PORT,
  edgeCertificate,
  LoopbackContainer,
  REPO_ROOT,
  stopAll,
} from "./support/containers.js";

const ORIGIN_PORT = 8080;
const TIMEOUT_MS = 2_000;
const MAX_IN_FLIGHT = 3;
const MAX_TARGET_BYTES = 32 * 1024;
const MAX_POLLS = 100;
const HOST = "e2e-edge.trycloudflare.com";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

let network: StartedNetwork | undefined;
let origin: StartedTestContainer | undefined;
let cutEdge: StartedTestContainer | undefined;
let bufferEdge: StartedTestContainer | undefined;
let ca: string;

function request(
  edge: StartedTestContainer,
  target: string,
  headers: Record<string, string> = {},
  onResponse?: () => void,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: "127.0.0.1",
        port: edge.getMappedPort(EDGE_TLS_PORT),
        path: target,
        servername: HOST,
        ca,
        headers: { host: HOST, ...headers },
        agent: false,
      },
      (res) => {
        onResponse?.();
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
        );
      },
    );
    req.on("error", reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`timed out: ${target.slice(0, 80)}`)));
    req.end();
  });
}

/** Asks the origin directly (its published port), past the edge. */
async function originGet<T>(route: string): Promise<T> {
  return (await (await fetch(`http://127.0.0.1:${origin!.getMappedPort(ORIGIN_PORT)}${route}`)).json()) as T;
}

async function pollOrigin<T>(route: string, done: (body: T) => boolean): Promise<T> {
  for (let i = 0; i < MAX_POLLS; i++) {
    const body = await originGet<T>(route);
    if (done(body)) return body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`origin ${route} never reached the expected state`);
}

async function startEdge(sse: string): Promise<StartedTestContainer> {
  return new LoopbackContainer(EDGE_IMAGE)
    .withName(e2eName(`edge-${sse}`))
    .withNetwork(network!)
    .withExposedPorts(EDGE_TLS_PORT)
    .withEnvironment({
      EDGE_ORIGIN: `http://origin:${ORIGIN_PORT}`,
      EDGE_SSE: sse,
      EDGE_TIMEOUT_MS: String(TIMEOUT_MS),
      EDGE_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
    })
    .withWaitStrategy(Wait.forLogMessage(/edge stand-in: https/))
    .start();
}

beforeAll(async () => {
  await buildEdgeImage();
  network = await new Network().start();
  origin = await new LoopbackContainer("node:20-bookworm-slim")
    .withName(e2eName("edge-origin"))
    .withNetwork(network)
    .withNetworkAliases("origin")
    .withExposedPorts(ORIGIN_PORT)
    .withCopyFilesToContainer([
      { source: path.join(REPO_ROOT, "test", "e2e", "support", "edge-origin.mjs"), target: "/origin.mjs" },
    ])
    .withCommand(["node", "/origin.mjs"])
    .withWaitStrategy(Wait.forListeningPorts())
    .start();
  cutEdge = await startEdge("cut");
  bufferEdge = await startEdge("buffer");
  ca = await edgeCertificate(cutEdge);
});

afterAll(async () => {
  await stopAll([cutEdge, bufferEdge, origin]);
  await network?.stop().catch(() => undefined);
});

describe("edge stand-in (a quick tunnel's behaviour)", () => {
  it("adds cf-ray and cf-connecting-ip, strips hop-by-hop headers and keeps the target byte for byte", async () => {
    const target = "/echo?raw=a~sb%2Fc+d&path=%E2%9C%93";
    const answer = await request(cutEdge!, target, {
      connection: "x-private, keep-alive",
      "x-private": "1",
      "x-kept": "yes",
      te: "trailers",
    });
    expect(answer.status).toBe(200);
    const seen = JSON.parse(answer.body) as { url: string; headers: Record<string, string> };
    expect(seen.url).toBe(target);
    expect(seen.headers["cf-ray"]).toMatch(/^[0-9a-f]{16}-E2E$/);
    expect(answer.headers["cf-ray"]).toBe(seen.headers["cf-ray"]);
    expect(seen.headers["cf-connecting-ip"]).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(seen.headers["x-forwarded-for"]).toBe(seen.headers["cf-connecting-ip"]);
    expect(seen.headers).toMatchObject({ host: HOST, "x-forwarded-proto": "https", "x-kept": "yes" });
    for (const gone of ["x-private", "te", "keep-alive", "upgrade"]) expect(seen.headers[gone], gone).toBeUndefined();
  });

  it("answers 414 itself for a request target over 32 KB, and forwards one just under", async () => {
    const fill = (bytes: number) => `/echo?raw=${"a".repeat(bytes - "/echo?raw=".length)}`;
    const under = await request(cutEdge!, fill(MAX_TARGET_BYTES));
    expect(under.status).toBe(200);
    expect((JSON.parse(under.body) as { targetBytes: number }).targetBytes).toBe(MAX_TARGET_BYTES);
    const over = await request(cutEdge!, fill(MAX_TARGET_BYTES + 1));
    expect(over.status).toBe(414);
    expect(over.headers["cf-ray"]).toBeDefined();
  });

  it("answers 524 when the origin sends nothing within the timeout, and passes a late-but-in-time answer", async () => {
    expect((await request(cutEdge!, `/slow?ms=${TIMEOUT_MS / 4}`)).status).toBe(200);
    const late = await request(cutEdge!, `/slow?ms=${TIMEOUT_MS * 3}`);
    expect(late.status).toBe(524);
    expect(late.body).toContain("A timeout occurred");
  });

  it("refuses requests past the in-flight limit with 429 and admits again once they finish", async () => {
    await originGet("/release");
    const holding = Array.from({ length: MAX_IN_FLIGHT }, () => request(cutEdge!, "/hold"));
    await pollOrigin<{ held: number }>("/held", (b) => b.held === MAX_IN_FLIGHT);
    const refused = await request(cutEdge!, "/echo");
    expect(refused.status).toBe(429);
    await originGet("/release");
    expect((await Promise.all(holding)).map((a) => a.status)).toEqual(Array(MAX_IN_FLIGHT).fill(200));
    expect((await request(cutEdge!, "/echo")).status).toBe(200);
  });

  it("cuts Server-Sent Events: the stream arrives without a single data field", async () => {
    const pending = request(cutEdge!, "/sse");
    await pollOrigin<{ wrote: number }>("/sse-state", (b) => b.wrote >= 1);
    await originGet("/sse-release");
    const answer = await pending;
    expect(answer.headers["x-edge-standin-cut"]).toBe("event-stream");
    expect(answer.body).toBe("cut-by-edge-standin: one\n\ncut-by-edge-standin: two\n\n");
  });

  it("or buffers them: nothing reaches the client until the origin ends the stream", async () => {
    let responded = false;
    const pending = request(bufferEdge!, "/sse", {}, () => {
      responded = true;
    });
    await pollOrigin<{ wrote: number }>("/sse-state", (b) => b.wrote === 1);
    // The origin has sent its first event; a buffering edge has passed on nothing, not even the headers.
    expect(responded).toBe(false);
    await originGet("/sse-release");
    const answer = await pending;
    expect(answer.headers["x-edge-standin-buffered"]).toBe("event-stream");
    expect(answer.body).toBe("data: one\n\ndata: two\n\n");
  });
});
