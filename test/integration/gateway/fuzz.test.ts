import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { rawGet } from "../../helpers/raw-http.js";
import { pick, seededRandom } from "../../helpers/seeded-random.js";

const SEED = Number(process.env.FUZZ_SEED ?? 20261129);
const CASES = Number(process.env.FUZZ_CASES ?? 2000);

const ROUTES = [
  "r",
  "f",
  "g",
  "o",
  "t",
  "p",
  "w",
  "e",
  "a",
  "x",
  "s",
  "b",
  "j",
  "z",
  "k",
  "manifest",
  "read",
  "",
  "r/",
  "zz",
  "%72",
  "..",
  "r/extra",
];
const KEYS = [
  "path",
  "file",
  "raw",
  "wait",
  "run",
  "call",
  "part",
  "last",
  "id",
  "offset",
  "length",
  "count",
  "blob",
  "i",
  "regex",
  "include",
  "name",
  "query",
  "grep",
  "old",
  "new",
  "bg",
  "timeout",
  "cwd",
  "plugin",
  "",
  "=",
  "p%61th",
  "%",
  "~",
  "pa th",
];
const ATOMS = [
  "%",
  "%%",
  "%zz",
  "%2",
  "%C3",
  "%C3%A9",
  "%F0%9F%98%80",
  "%ED%A0%80",
  "%00",
  "%0A",
  "%FF",
  "%2525",
  "+",
  "~",
  "~~",
  "~n",
  "~u",
  "~uD83D",
  "~u{",
  "~u{110000}",
  "~uDE00~uD83D",
  "&",
  "&&",
  "=",
  "==",
  "?",
  "#",
  "/",
  "..",
  "../..",
  "/etc/passwd",
  "\\",
  "C:\\x",
  "a",
  "0",
  "-1",
  "1e9",
  "99999999999999999999",
  "true",
  "yes",
  '"',
  "'",
  "<",
  ">",
  "{",
  "}",
  "|",
  "^",
  "`",
  "[",
  "]",
  ";",
  ":",
  "@",
  "$",
  "!",
  "*",
  "(",
  ")",
  ",",
  "&wait=1",
  "&path=x",
  "raw=",
  "~a",
  "%26",
  "%3D",
];

function fuzzValue(rand: () => number): string {
  const n = Math.floor(rand() * 6);
  let v = "";
  for (let i = 0; i < n; i++) v += pick(rand, ATOMS);
  if (rand() < 0.02) v += "x".repeat(Math.floor(rand() * 16_000));
  return v;
}

function fuzzTarget(rand: () => number, bases: string[]): string {
  const base = pick(rand, bases);
  const route = pick(rand, ROUTES);
  const params: string[] = [];
  const count = Math.floor(rand() * 6);
  for (let i = 0; i < count; i++) {
    const key = pick(rand, KEYS);
    params.push(rand() < 0.1 ? key : `${key}=${fuzzValue(rand)}`);
  }
  const query = params.length > 0 || rand() < 0.3 ? `?${params.join(pick(rand, ["&", "&", "&", "&&", ";"]))}` : "";
  return `${base}/${route}${query}`;
}

describe("gateway fuzz", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, terminal: false });
  });
  afterAll(async () => t.close());

  it(`answers ${CASES} malformed URLs (seed ${SEED}) with a result or a structured error, never a 5xx, stack or hang`, async () => {
    const rand = seededRandom(SEED);
    const bases = [new URL(s.r).pathname, new URL(s.m!).pathname, "/v0/init", "/v0/ZZZZZZZZ", "/v0"];
    const statuses = new Map<number, number>();
    for (let i = 0; i < CASES; i++) {
      const target = fuzzTarget(rand, bases);
      const res = await rawGet(t.bridge.dataUrl, target);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const where = `case ${i}: ${target.slice(0, 200)}`;
      // 400 and 431 come from Node's HTTP parser for request lines no server may accept.
      expect([200, 400, 404, 405, 431], where).toContain(res.status);
      expect(res.body, where).not.toMatch(/\bat .+\.[cm]?[jt]s:\d+:\d+|Error: .+\n\s+at /);
      if (res.status === 200) {
        const body = res.headers["content-type"]?.startsWith("text/plain")
          ? { ok: res.body.startsWith("URLBRIDGE_RANGE ") }
          : (JSON.parse(res.body) as { ok: unknown; errorCode?: unknown; repairHint?: unknown });
        expect(typeof body.ok, where).toBe("boolean");
        if (body.ok === false) {
          const failure = body as { errorCode?: unknown; repairHint?: unknown; retryable?: unknown };
          expect(typeof failure.errorCode, where).toBe("string");
          expect(failure.errorCode, where).not.toBe("internal_error");
          expect(typeof failure.retryable, where).toBe("boolean");
        }
      }
    }
    console.info(`fuzz statuses: ${JSON.stringify(Object.fromEntries(statuses))}`);
  }, 300_000);
});
