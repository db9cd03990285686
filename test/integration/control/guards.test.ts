import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECURITY_HEADERS } from "../../../server/control/security-headers.js";
import { startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge } from "../../helpers/bridge.js";
import { cookiePair, rawRequest } from "./http-client.js";

const BEARER = { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` };

describe("control plane guards", () => {
  let t: TestBridge;
  let control: string;
  let ownOrigin: string;
  let cookie: string;

  beforeAll(async () => {
    t = await startTestBridge({ URLBRIDGE_ALLOWED_HOSTS: "bridge.lan, ops.example:8443" });
    control = t.bridge.controlUrl;
    ownOrigin = control;
    const login = await rawRequest(`${control}/api/login`, {
      method: "POST",
      headers: { origin: ownOrigin },
      body: { token: TEST_OPERATOR_TOKEN },
    });
    expect(login.status).toBe(200);
    cookie = cookiePair(login.headers["set-cookie"] as string[]);
  });
  afterAll(async () => t.close());

  describe("authentication", () => {
    it.each([
      ["GET", "/api/projects"],
      ["GET", "/api/sessions"],
      ["POST", "/api/sessions"],
      ["PUT", "/api/tunnel"],
    ])("answers 401 to %s %s without credentials", async (method, route) => {
      const res = await rawRequest(`${control}${route}`, {
        method,
        headers: { origin: ownOrigin },
        body: method === "GET" ? undefined : {},
      });
      expect(res.status).toBe(401);
      expect(res.json().error?.code).toBe("unauthorized");
    });

    it.each([
      ["a wrong token", "Bearer not-the-operator-token-0000"],
      ["the right token with a suffix", `Bearer ${TEST_OPERATOR_TOKEN}x`],
      ["a non-bearer scheme", `Basic ${TEST_OPERATOR_TOKEN}`],
    ])("answers 401 to %s", async (_label, authorization) => {
      const res = await rawRequest(`${control}/api/projects`, { headers: { authorization } });
      expect(res.status).toBe(401);
      expect(res.json().error?.code).toBe("unauthorized");
    });

    it("does not fall back to a valid cookie when a wrong bearer is presented", async () => {
      const res = await rawRequest(`${control}/api/projects`, {
        headers: { authorization: "Bearer wrong-wrong-wrong-wrong", cookie },
      });
      expect(res.status).toBe(401);
    });

    it("accepts the operator token as a bearer without any Origin", async () => {
      const res = await rawRequest(`${control}/api/projects`, {
        method: "POST",
        headers: BEARER,
        body: { name: "by-script", root: t.projectDir },
      });
      expect(res.status).toBe(201);
      expect((await rawRequest(`${control}/api/whoami`, { headers: BEARER })).json()).toEqual({
        authenticated: true,
        via: "bearer",
        expiresAt: null,
      });
    });

    it("keeps /api/health and /api/login-info open and says where the token comes from", async () => {
      expect((await rawRequest(`${control}/api/health`)).json()).toMatchObject({ ok: true });
      expect((await rawRequest(`${control}/api/login-info`)).json()).toEqual({
        source: "env",
        file: null,
        showTokenCommand: expect.stringMatching(/^(npx )?urlbridge token --show$/),
      });
      expect((await rawRequest(`${control}/api/whoami`)).json()).toEqual({
        authenticated: false,
        via: null,
        expiresAt: null,
      });
    });
  });

  describe("login cookie", () => {
    it("is HttpOnly, SameSite=Strict and scoped to Path=/", async () => {
      const res = await rawRequest(`${control}/api/login`, {
        method: "POST",
        headers: { origin: ownOrigin },
        body: { token: TEST_OPERATOR_TOKEN },
      });
      const header = (res.headers["set-cookie"] as string[])[0]!;
      expect(header).toMatch(/^urlbridge_session=[A-Za-z0-9_-]{43};/);
      expect(header).toMatch(/;\s*httponly/i);
      expect(header).toMatch(/;\s*samesite=strict/i);
      expect(header).toMatch(/;\s*path=\/(;|$)/i);
      expect(res.json()).toMatchObject({ authenticated: true, via: "cookie" });
    });

    it("authenticates reads from the browser", async () => {
      const res = await rawRequest(`${control}/api/whoami`, { headers: { cookie } });
      expect(res.status).toBe(200);
      expect(res.json<{ via: string }>().via).toBe("cookie");
    });

    it("refuses a cookie value the server never issued", async () => {
      const res = await rawRequest(`${control}/api/projects`, { headers: { cookie: "urlbridge_session=forged" } });
      expect(res.status).toBe(401);
    });

    it("answers 401 invalid_token to a wrong login token and sets no cookie", async () => {
      const res = await rawRequest(`${control}/api/login`, {
        method: "POST",
        headers: { origin: ownOrigin },
        body: { token: "nope-nope-nope-nope" },
      });
      expect(res.status).toBe(401);
      expect(res.json().error?.code).toBe("invalid_token");
      expect(res.headers["set-cookie"]).toBeUndefined();
    });

    it("stops working after logout", async () => {
      const login = await rawRequest(`${control}/api/login`, {
        method: "POST",
        headers: { origin: ownOrigin },
        body: { token: TEST_OPERATOR_TOKEN },
      });
      const mine = cookiePair(login.headers["set-cookie"] as string[]);
      expect((await rawRequest(`${control}/api/whoami`, { headers: { cookie: mine } })).json()).toMatchObject({
        authenticated: true,
      });
      const out = await rawRequest(`${control}/api/logout`, {
        method: "POST",
        headers: { cookie: mine, origin: ownOrigin },
      });
      expect(out.status).toBe(204);
      expect((out.headers["set-cookie"] as string[])[0]).toMatch(/^urlbridge_session=;.*expires=Thu, 01 Jan 1970/i);
      expect((await rawRequest(`${control}/api/whoami`, { headers: { cookie: mine } })).json()).toMatchObject({
        authenticated: false,
      });
      expect((await rawRequest(`${control}/api/projects`, { headers: { cookie: mine } })).status).toBe(401);
    });
  });

  describe("same-origin rule for cookie mutations", () => {
    it.each([
      ["a foreign site", { origin: "http://evil.example" }],
      ["another port on localhost (same site, other origin)", { origin: "http://127.0.0.1:1" }],
      ["the opaque null origin", { origin: "null" }],
      ["no Origin and a cross-site fetch", { "sec-fetch-site": "cross-site" }],
      ["no Origin and a same-site fetch", { "sec-fetch-site": "same-site" }],
      ["no Origin and no Sec-Fetch-Site", {}],
    ])("answers 403 cross_origin to %s", async (_label, headers: Record<string, string>) => {
      const before = (await rawRequest(`${control}/api/projects`, { headers: BEARER })).json<unknown[]>().length;
      const res = await rawRequest(`${control}/api/projects`, {
        method: "POST",
        headers: { cookie, ...headers },
        body: { name: `x-${before}`, root: t.projectDir },
      });
      expect(res.status).toBe(403);
      expect(res.json().error?.code).toBe("cross_origin");
      expect((await rawRequest(`${control}/api/projects`, { headers: BEARER })).json<unknown[]>()).toHaveLength(before);
    });

    it("refuses a cross-origin login too", async () => {
      const res = await rawRequest(`${control}/api/login`, {
        method: "POST",
        headers: { origin: "http://evil.example" },
        body: { token: TEST_OPERATOR_TOKEN },
      });
      expect(res.status).toBe(403);
      expect(res.headers["set-cookie"]).toBeUndefined();
    });

    it.each([
      ["a same-origin Origin header", () => ({ origin: ownOrigin })],
      ["Sec-Fetch-Site: same-origin without Origin", () => ({ "sec-fetch-site": "same-origin" })],
    ])("accepts %s", async (label, headers) => {
      const res = await rawRequest(`${control}/api/projects`, {
        method: "POST",
        headers: { cookie, ...headers() },
        body: { name: `ui-${label.length}`, root: t.projectDir },
      });
      expect(res.status).toBe(201);
      expect(res.json<{ root: string }>().root).toBe(t.projectDir);
    });
  });

  describe("Host allowlist", () => {
    it.each([
      "evil.example",
      "evil.example:47433",
      "127.0.0.1.nip.io",
      "bridge.lan.evil.example",
      "ops.example:9999",
      "localhost@evil",
    ])("answers 403 host_not_allowed to Host %j", async (host) => {
      for (const route of ["/api/health", "/api/projects", "/"]) {
        const res = await rawRequest(`${control}${route}`, { headers: { ...BEARER, host } });
        expect(res.status, route).toBe(403);
        expect(res.json().error?.code).toBe("host_not_allowed");
      }
    });

    it("answers 403 to an HTTP/1.0 request with no Host at all", async () => {
      const { port } = new URL(control);
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(port), "127.0.0.1", () => socket.end("GET /api/health HTTP/1.0\r\n\r\n"));
        let text = "";
        socket.on("data", (c: Buffer) => (text += c.toString("utf8")));
        socket.on("end", () => resolve(text));
        socket.on("error", reject);
      });
      expect(reply).toMatch(/^HTTP\/1\.1 403 /);
      expect(reply).toContain('"host_not_allowed"');
    });

    it.each([
      "localhost",
      "localhost:5173",
      "127.0.0.1:80",
      "[::1]:47433",
      "LOCALHOST",
      "bridge.lan",
      "bridge.lan:8080",
      "ops.example:8443",
    ])("accepts Host %j", async (host) => {
      const res = await rawRequest(`${control}/api/projects`, { headers: { ...BEARER, host } });
      expect(res.status).toBe(200);
    });
  });

  describe("headers", () => {
    it.each(["/", "/api/health", "/api/projects", "/api/nope"])("sends the security headers on %s", async (route) => {
      const res = await rawRequest(`${control}${route}`);
      for (const [name, value] of Object.entries(SECURITY_HEADERS))
        expect(res.headers[name.toLowerCase()], name).toBe(value);
      expect(res.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
      expect(res.headers["content-security-policy"]).not.toContain("unsafe-inline");
    });

    it("never answers a CORS preflight or adds CORS headers", async () => {
      const preflight = await rawRequest(`${control}/api/projects`, {
        method: "OPTIONS",
        headers: {
          origin: "http://evil.example",
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization",
        },
      });
      const simple = await rawRequest(`${control}/api/projects`, {
        headers: { ...BEARER, origin: "http://evil.example" },
      });
      for (const res of [preflight, simple]) {
        expect(Object.keys(res.headers).filter((h) => h.startsWith("access-control-"))).toEqual([]);
      }
      expect(preflight.status).toBeGreaterThanOrEqual(400);
    });
  });

  describe("plane separation", () => {
    it.each(["/", "/index.html", "/api", "/api/health", "/api/projects", "/api/login-info", "/assets/index.js"])(
      "the data plane answers an opaque 404 to GET %s",
      async (route) => {
        const unknown = await rawRequest(`${t.bridge.dataUrl}/v0/AAAAAAAA/r`);
        const res = await rawRequest(`${t.bridge.dataUrl}${route}`, { headers: BEARER });
        expect(res.status).toBe(404);
        expect(res.text).toBe(unknown.text);
      },
    );

    it("the data plane does not accept API mutations", async () => {
      const res = await rawRequest(`${t.bridge.dataUrl}/api/login`, {
        method: "POST",
        body: { token: TEST_OPERATOR_TOKEN },
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers["set-cookie"]).toBeUndefined();
    });

    it("the control plane does not serve the Init route", async () => {
      const s = await t.session();
      const path = new URL(s.initUrl).pathname;
      expect((await rawRequest(s.initUrl)).status).toBe(200);
      const res = await rawRequest(`${control}${path}`, { headers: BEARER });
      expect(res.status).toBe(404);
      expect(res.text).not.toContain(s.r);
    });
  });
});

describe("login info with a generated token", () => {
  it("names the token file, never the token", async () => {
    const t = await startTestBridge({ URLBRIDGE_OPERATOR_TOKEN: "" });
    try {
      const file = path.join(t.stateDir, "operator-token");
      const res = await rawRequest(`${t.bridge.controlUrl}/api/login-info`);
      // The command names the state dir: it is not the default, and the command must find the same file.
      expect(res.json()).toEqual({
        source: "file",
        file,
        showTokenCommand: `URLBRIDGE_STATE_DIR=${t.stateDir} npx urlbridge token --show`,
      });
      expect(res.text).not.toContain(fs.readFileSync(file, "utf8").trim());
    } finally {
      await t.close();
    }
  });
});
