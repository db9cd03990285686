// Login sessions survive a bridge restart: kept in the state store (migration 005) as digests with an expiry,
// never as the cookie value; logout, expiry and the cap still end them.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createLoginSessions,
  LOGIN_COOKIE,
  LOGIN_SESSION_TTL_MS,
  MAX_LOGIN_SESSIONS,
} from "../../../server/control/login-sessions.js";
import { OPERATOR_TOKEN_FILE } from "../../../server/control/operator-token.js";
import { STATE_FILE_NAME } from "../../../server/store/database.js";
import { openStore, type Store } from "../../../server/store/index.js";
import { makeTempDir, startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge } from "../../helpers/bridge.js";
import { cookiePair, rawRequest } from "./http-client.js";

const open: Array<TestBridge | Store> = [];
const BINDING = Buffer.alloc(32, 7);
afterEach(async () => {
  for (const x of open.splice(0)) await x.close();
});

async function logIn(t: TestBridge, token = TEST_OPERATOR_TOKEN): Promise<string> {
  const control = t.bridge.controlUrl;
  const res = await rawRequest(`${control}/api/login`, {
    method: "POST",
    headers: { origin: control },
    body: { token },
  });
  expect(res.status).toBe(200);
  return cookiePair(res.headers["set-cookie"] as string[]);
}

const projectsWith = (t: TestBridge, cookie: string) =>
  rawRequest(`${t.bridge.controlUrl}/api/projects`, { headers: { cookie } });

describe("login sessions across a restart", () => {
  it("keeps a browser logged in when the bridge restarts on the same state, and stores only a digest", async () => {
    const stateDir = makeTempDir("login-state");
    const first = await startTestBridge({}, { stateDir });
    const cookie = await logIn(first);
    expect((await projectsWith(first, cookie)).status).toBe(200);
    await first.close();

    const second = await startTestBridge({}, { stateDir });
    open.push(second);
    expect((await projectsWith(second, cookie)).status).toBe(200);
    const value = cookie.slice(`${LOGIN_COOKIE}=`.length);
    const rows = second.bridge.store.db.prepare("SELECT digest FROM login_sessions").all() as Array<{ digest: string }>;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.digest).not.toBe(value);
    for (const suffix of ["", "-wal"]) {
      const file = path.join(stateDir, STATE_FILE_NAME + suffix);
      if (fs.existsSync(file)) expect(fs.readFileSync(file).includes(Buffer.from(value))).toBe(false);
    }
  });

  it("ends a logged-out session for good, across a restart too", async () => {
    const stateDir = makeTempDir("logout-state");
    const first = await startTestBridge({}, { stateDir });
    const cookie = await logIn(first);
    const out = await rawRequest(`${first.bridge.controlUrl}/api/logout`, {
      method: "POST",
      headers: { origin: first.bridge.controlUrl, cookie },
    });
    expect(out.status).toBe(204);
    await first.close();
    const second = await startTestBridge({}, { stateDir });
    open.push(second);
    expect((await projectsWith(second, cookie)).status).toBe(401);
  });
});

describe("login sessions end with the operator token they were made with", () => {
  it("answers 401 to an old cookie once the token file is removed and the bridge restarted (deploy/GUIDE.md)", async () => {
    const stateDir = makeTempDir("login-rotate-file");
    const fromFile = { URLBRIDGE_OPERATOR_TOKEN: "" };
    const first = await startTestBridge(fromFile, { stateDir });
    const oldToken = fs.readFileSync(path.join(stateDir, OPERATOR_TOKEN_FILE), "utf8").trim();
    const cookie = await logIn(first, oldToken);
    expect((await projectsWith(first, cookie)).status).toBe(200);
    await first.close();

    fs.rmSync(path.join(stateDir, OPERATOR_TOKEN_FILE));
    const second = await startTestBridge(fromFile, { stateDir });
    open.push(second);
    const newToken = fs.readFileSync(path.join(stateDir, OPERATOR_TOKEN_FILE), "utf8").trim();
    expect(newToken).not.toBe(oldToken);
    expect((await projectsWith(second, cookie)).status).toBe(401);
    const whoami = await rawRequest(`${second.bridge.controlUrl}/api/whoami`, { headers: { cookie } });
    expect(whoami.json()).toMatchObject({ authenticated: false });
    // A login with the new token works as before.
    expect((await projectsWith(second, await logIn(second, newToken))).status).toBe(200);
  });

  it("answers 401 to an old cookie once URLBRIDGE_OPERATOR_TOKEN changes, and 200 while it stays", async () => {
    const stateDir = makeTempDir("login-rotate-env");
    const first = await startTestBridge({}, { stateDir });
    const cookie = await logIn(first);
    await first.close();
    const same = await startTestBridge({}, { stateDir });
    expect((await projectsWith(same, cookie)).status).toBe(200);
    await same.close();
    const changed = await startTestBridge(
      { URLBRIDGE_OPERATOR_TOKEN: "another-operator-token-9876543210" },
      { stateDir },
    );
    open.push(changed);
    expect((await projectsWith(changed, cookie)).status).toBe(401);
  });
});

describe("createLoginSessions over the store", () => {
  it("expires a session after its TTL and removes the row", () => {
    const store = openStore(makeTempDir("ttl"));
    open.push(store);
    let clock = 1_000_000;
    const sessions = createLoginSessions(store.loginSessions, BINDING, () => clock);
    const { id, expiresAt } = sessions.create();
    expect(expiresAt).toBe(clock + LOGIN_SESSION_TTL_MS);
    expect(sessions.lookup(id)).toEqual({ expiresAt });
    clock += LOGIN_SESSION_TTL_MS;
    expect(sessions.lookup(id)).toBeUndefined();
    expect(store.loginSessions.count()).toBe(0);
    expect(sessions.lookup(undefined)).toBeUndefined();
    expect(sessions.lookup("not-a-session")).toBeUndefined();
  });

  it(`keeps at most ${MAX_LOGIN_SESSIONS}, dropping the oldest`, () => {
    const store = openStore(makeTempDir("cap"));
    open.push(store);
    let clock = 5_000;
    const sessions = createLoginSessions(store.loginSessions, BINDING, () => clock++);
    const ids = Array.from({ length: MAX_LOGIN_SESSIONS + 8 }, () => sessions.create().id);
    expect(store.loginSessions.count()).toBe(MAX_LOGIN_SESSIONS);
    expect(sessions.lookup(ids[0])).toBeUndefined();
    expect(sessions.lookup(ids[7])).toBeUndefined();
    expect(sessions.lookup(ids[8])).toBeDefined();
    expect(sessions.lookup(ids.at(-1))).toBeDefined();
  });
});
