// Failed operator authentications slow their source down and never lock the right token out (issue 10, item 5):
// a bounded flood of wrong bearer tokens from one address, with the right token and a login sent mid-flood.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AUTH_FREE_FAILURES,
  AUTH_MAX_DELAY_MS,
  AUTH_MAX_HELD,
  createAuthBackoff,
} from "../../../server/control/auth-backoff.js";
import { startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge } from "../../helpers/bridge.js";
import { cookiePair, rawRequest, type RawResponse } from "./http-client.js";

/** Timers never fire early, but Node rounds to the millisecond: allow that much below each hold. */
const TIMER_SLACK_MS = 2;
const SEQUENTIAL_FLOOD = 10;
const CONCURRENT_FLOOD = AUTH_MAX_HELD + 8;

describe("operator authentication backoff", () => {
  let t: TestBridge;
  let control: string;
  const holds = createAuthBackoff();
  const wrongBearer = (i: number) =>
    rawRequest(`${control}/api/projects`, { headers: { authorization: `Bearer wrong-operator-token-guess-${i}` } });
  const rightBearer = () =>
    rawRequest(`${control}/api/projects`, { headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` } });
  const login = (token: string) =>
    rawRequest(`${control}/api/login`, { method: "POST", headers: { origin: control }, body: { token } });

  beforeAll(async () => {
    t = await startTestBridge();
    control = t.bridge.controlUrl;
  });
  afterAll(async () => t.close());

  it(`answers the first ${AUTH_FREE_FAILURES} wrong bearers at once, then holds each failure longer`, async () => {
    let total = 0;
    for (let i = 1; i <= SEQUENTIAL_FLOOD; i++) {
      const started = performance.now();
      const res = await wrongBearer(i);
      const took = performance.now() - started;
      expect(res.status).toBe(401);
      expect(res.json().error?.code).toBe("unauthorized");
      const hold = holds.delayFor(i);
      expect(took, `failure ${i}`).toBeGreaterThanOrEqual(hold - TIMER_SLACK_MS);
      total += took;
    }
    const expected = Array.from({ length: SEQUENTIAL_FLOOD }, (_, i) => holds.delayFor(i + 1)).reduce(
      (a, b) => a + b,
      0,
    );
    expect(expected).toBe(3100);
    expect(total).toBeGreaterThanOrEqual(expected - SEQUENTIAL_FLOOD * TIMER_SLACK_MS);
  });

  it("accepts the right bearer and a right login at once while a flood of wrong ones is being held", async () => {
    const settled: RawResponse[] = [];
    const flood = Array.from({ length: CONCURRENT_FLOOD }, (_, i) =>
      wrongBearer(100 + i).then((res) => (settled.push(res), res)),
    );
    // Every wrong one is now past the free failures and due for the longest hold; only AUTH_MAX_HELD are held.
    await expect
      .poll(() => settled.filter((r) => r.status === 429).length, { timeout: AUTH_MAX_DELAY_MS })
      .toBe(CONCURRENT_FLOOD - AUTH_MAX_HELD);
    const right = await rightBearer();
    const loggedIn = await login(TEST_OPERATOR_TOKEN);
    // Answered before any held failure: no 401 has come back yet.
    expect(settled.filter((r) => r.status === 401)).toHaveLength(0);
    expect(right.status).toBe(200);
    expect(loggedIn.status).toBe(200);
    expect(loggedIn.json()).toMatchObject({ authenticated: true, via: "cookie" });
    const cookie = cookiePair(loggedIn.headers["set-cookie"] as string[]);
    expect((await rawRequest(`${control}/api/whoami`, { headers: { cookie } })).json()).toMatchObject({
      authenticated: true,
    });

    const all = await Promise.all(flood);
    expect(all.filter((r) => r.status === 401)).toHaveLength(AUTH_MAX_HELD);
    const saturated = all.filter((r) => r.status === 429);
    expect(saturated).toHaveLength(CONCURRENT_FLOOD - AUTH_MAX_HELD);
    for (const res of saturated) {
      expect(res.json().error?.code).toBe("auth_backoff");
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
      expect(res.headers["set-cookie"]).toBeUndefined();
    }
  });
});

describe("wrong logins and wrong bearers", () => {
  let t: TestBridge;
  beforeAll(async () => {
    t = await startTestBridge();
  });
  afterAll(async () => t.close());

  it("count toward one backoff per address, and a wrong login is held like a wrong bearer", async () => {
    const control = t.bridge.controlUrl;
    const wrongLogin = (i: number) =>
      rawRequest(`${control}/api/login`, {
        method: "POST",
        headers: { origin: control },
        body: { token: `wrong-login-${i}` },
      });
    for (let i = 0; i < AUTH_FREE_FAILURES - 2; i++) expect((await wrongLogin(i)).status).toBe(401);
    for (let i = 0; i < 2; i++)
      expect(
        (await rawRequest(`${control}/api/projects`, { headers: { authorization: `Bearer wrong-${i}` } })).status,
      ).toBe(401);
    const started = performance.now();
    const held = await wrongLogin(99);
    expect(held.status).toBe(401);
    expect(held.json().error?.code).toBe("invalid_token");
    expect(performance.now() - started).toBeGreaterThanOrEqual(
      createAuthBackoff().delayFor(AUTH_FREE_FAILURES + 1) - TIMER_SLACK_MS,
    );
    const right = await rawRequest(`${control}/api/login`, {
      method: "POST",
      headers: { origin: control },
      body: { token: TEST_OPERATOR_TOKEN },
    });
    expect(right.status).toBe(200);
  });
});
