import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../server/config.js";

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const c = loadConfig({ HOME: "/home/x" });
    expect(c.control).toEqual({ host: "127.0.0.1", hosts: ["127.0.0.1"], port: 47433 });
    expect(c.trustedProxies).toEqual([]);
    expect(c.data).toEqual({ host: "127.0.0.1", port: 47432 });
    expect(c.stateDir).toBe(path.join("/home/x", ".local", "state", "urlbridge"));
    expect(c.ephemeralCapabilities).toBe(false);
    expect(c.logLevel).toBe("info");
    expect(c.spawner).toBe("auto");
  });

  it("reads every variable", () => {
    const c = loadConfig({
      URLBRIDGE_STATE_DIR: "/var/lib/urlbridge",
      URLBRIDGE_CONTROL_HOST: "0.0.0.0",
      URLBRIDGE_CONTROL_PORT: "1",
      URLBRIDGE_DATA_HOST: "0.0.0.0",
      URLBRIDGE_DATA_PORT: "2",
      URLBRIDGE_PUBLIC_ORIGIN: "https://agent.example.com/",
      URLBRIDGE_OPERATOR_TOKEN: "a-long-enough-token-0123456789",
      URLBRIDGE_TUNNEL_METRICS: "http://tunnel:2000",
      URLBRIDGE_EPHEMERAL_CAPABILITIES: "1",
      URLBRIDGE_LOG_LEVEL: "debug",
      URLBRIDGE_ALLOWED_HOSTS: "Box.lan, other",
      URLBRIDGE_SPAWNER: "off",
    });
    expect(c).toMatchObject({
      stateDir: "/var/lib/urlbridge",
      control: { host: "0.0.0.0", port: 1 },
      data: { host: "0.0.0.0", port: 2 },
      publicOrigin: "https://agent.example.com",
      operatorToken: "a-long-enough-token-0123456789",
      tunnelMetrics: "http://tunnel:2000",
      ephemeralCapabilities: true,
      logLevel: "debug",
      allowedHosts: ["box.lan", "other"],
      spawner: "off",
    });
  });

  it.each([
    ["URLBRIDGE_CONTROL_PORT", "http"],
    ["URLBRIDGE_DATA_PORT", "70000"],
    ["URLBRIDGE_PUBLIC_ORIGIN", "ftp://x"],
    ["URLBRIDGE_PUBLIC_ORIGIN", "not a url"],
    ["URLBRIDGE_OPERATOR_TOKEN", "short"],
    ["URLBRIDGE_EPHEMERAL_CAPABILITIES", "maybe"],
    ["URLBRIDGE_LOG_LEVEL", "loud"],
    ["URLBRIDGE_TUNNEL_METRICS", "tunnel:2000"],
    ["URLBRIDGE_SPAWNER", "no"],
  ])("stops on a bad %s and names it", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it("reads a list of control hosts, the first one being where local clients connect, and trusted proxies", () => {
    const c = loadConfig({
      URLBRIDGE_CONTROL_HOST: "127.0.0.1, bridge-control",
      URLBRIDGE_TRUSTED_PROXIES: "tunnel,172.30.47.0/24,fd00::/8",
    });
    expect(c.control).toMatchObject({ host: "127.0.0.1", hosts: ["127.0.0.1", "bridge-control"] });
    expect(c.trustedProxies).toEqual(["tunnel", "172.30.47.0/24", "fd00::/8"]);
  });

  it.each([
    ["URLBRIDGE_CONTROL_HOST", " , "],
    ["URLBRIDGE_TRUSTED_PROXIES", "tun nel"],
    ["URLBRIDGE_TRUSTED_PROXIES", "10.0.0.0/40"],
  ])("refuses %s=%j", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it("reads the web tools' allowlist and search providers; nothing is allowed and no provider is set by default", () => {
    expect(loadConfig({ HOME: "/home/x" }).web).toEqual({
      allow: [],
      search: { brave: undefined, tavily: undefined, prefer: undefined },
    });
    const c = loadConfig({
      HOME: "/home/x",
      URLBRIDGE_WEB_ALLOW: "Wiki.LAN, 10.1.2.0/24,fd00::/8",
      URLBRIDGE_BRAVE_API_KEY: "bk",
      URLBRIDGE_TAVILY_API_KEY: "tk",
      URLBRIDGE_TAVILY_SEARCH_URL: "http://127.0.0.1:9/search",
      URLBRIDGE_WEBSEARCH_PROVIDER: "tavily",
    });
    expect(c.web).toEqual({
      allow: ["wiki.lan", "10.1.2.0/24", "fd00::/8"],
      search: {
        brave: { key: "bk", url: "https://api.search.brave.com/res/v1/web/search" },
        tavily: { key: "tk", url: "http://127.0.0.1:9/search" },
        prefer: "tavily",
      },
    });
  });

  it.each([
    ["URLBRIDGE_WEB_ALLOW", "10.0.0.0/33", "prefix length"],
    ["URLBRIDGE_WEB_ALLOW", "http://wiki.lan", "more than one /"],
    ["URLBRIDGE_WEBSEARCH_PROVIDER", "google", "URLBRIDGE_WEBSEARCH_PROVIDER"],
    ["URLBRIDGE_BRAVE_SEARCH_URL", "ftp://x/", "http:// or https://"],
  ])("refuses %s=%s, naming what it accepts", (name, value, words) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(words);
  });

  it("never echoes a bad operator token", () => {
    expect(() => loadConfig({ URLBRIDGE_OPERATOR_TOKEN: "sekrit" })).toThrow(/<redacted>/);
    expect(() => loadConfig({ URLBRIDGE_OPERATOR_TOKEN: "sekrit" })).not.toThrow(/sekrit/);
  });
});
