import type http from "node:http";
import { describe, expect, it } from "vitest";
import { parseCidr, parseTrustedProxy } from "../../server/config-checks.js";
import {
  createRequestSource,
  TRUSTED_NAME_RETRY_MS,
  TRUSTED_NAME_TTL_MS,
} from "../../server/gateway/request-source.js";

const request = (remoteAddress: string, headers: Record<string, string | string[]> = {}) =>
  ({ socket: { remoteAddress }, headers }) as unknown as http.IncomingMessage;

describe("request source", () => {
  it.each([
    ["172.30.47.0/24", { address: "172.30.47.0", prefix: 24, family: "ipv4" }],
    ["127.0.0.1", { address: "127.0.0.1", prefix: 32, family: "ipv4" }],
    ["FD00::/8", { address: "fd00::", prefix: 8, family: "ipv6" }],
    ["::ffff:10.0.0.1", { address: "10.0.0.1", prefix: 128, family: "ipv6" }],
  ])("parses %s", (entry, cidr) => {
    expect(parseCidr(entry)).toEqual(cidr);
  });

  it.each(["tunnel", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/8/8", "fd00::/129", ""])("refuses %j", (entry) => {
    expect(parseCidr(entry)).toBeUndefined();
  });

  it.each([
    ["no proxy is trusted", [], "172.30.47.2", { "cf-connecting-ip": "198.51.100.9" }, "172.30.47.2"],
    [
      "the peer is a trusted proxy",
      ["172.30.47.0/24"],
      "172.30.47.2",
      { "cf-connecting-ip": "198.51.100.9" },
      "198.51.100.9",
    ],
    [
      "the peer is an IPv4-mapped trusted proxy",
      ["172.30.47.0/24"],
      "::ffff:172.30.47.2",
      { "cf-connecting-ip": "2001:DB8::1" },
      "2001:db8::1",
    ],
    [
      "the peer is outside the trusted range",
      ["172.30.47.0/24"],
      "172.30.48.2",
      { "cf-connecting-ip": "198.51.100.9" },
      "172.30.48.2",
    ],
    ["a trusted proxy sends no header", ["172.30.47.0/24"], "172.30.47.2", {}, "172.30.47.2"],
    [
      "a trusted proxy sends a list",
      ["172.30.47.0/24"],
      "172.30.47.2",
      { "cf-connecting-ip": "198.51.100.9, 10.0.0.1" },
      "172.30.47.2",
    ],
    [
      "a trusted proxy sends the header twice",
      ["172.30.47.0/24"],
      "172.30.47.2",
      { "cf-connecting-ip": ["198.51.100.9", "10.0.0.1"] },
      "172.30.47.2",
    ],
  ])("keys on the right address when %s", (_label, trusted, peer, headers, expected) => {
    expect(createRequestSource(trusted)(request(peer, headers))).toBe(expected);
  });

  it.each([
    ["tunnel", { name: "tunnel" }],
    ["Tunnel.Internal", { name: "tunnel.internal" }],
    ["172.30.47.0/24", { cidr: { address: "172.30.47.0", prefix: 24, family: "ipv4" } }],
  ])("takes %j as a trusted proxy", (entry, parsed) => {
    expect(parseTrustedProxy(entry)).toEqual(parsed);
  });

  it.each(["tun nel", "-tunnel", "10.0.0.0/33", "1.2.3", "", "a_b"])("refuses %j as a trusted proxy", (entry) => {
    expect(parseTrustedProxy(entry)).toBeUndefined();
  });

  describe("a trusted name (compose's tunnel service)", () => {
    const header = { "cf-connecting-ip": "198.51.100.9" };
    const settle = () => new Promise((resolve) => setImmediate(resolve));

    it("believes only the addresses the name resolves to, once resolved, and not a neighbour on the same network", async () => {
      const looked: string[] = [];
      const sourceOf = createRequestSource(["tunnel"], {
        resolve: async (name) => (looked.push(name), ["172.30.47.3"]),
      });
      expect(sourceOf(request("172.30.47.3", header))).toBe("172.30.47.3"); // not resolved yet: not believed
      await settle();
      expect(sourceOf(request("172.30.47.3", header))).toBe("198.51.100.9");
      expect(sourceOf(request("::ffff:172.30.47.3", header))).toBe("198.51.100.9");
      expect(sourceOf(request("172.30.47.4", header))).toBe("172.30.47.4");
      expect(looked).toEqual(["tunnel"]);
    });

    it("follows the tunnel to a new address, and keeps the last one through a failed lookup", async () => {
      let now = 0;
      let answer: string[] | Error = ["172.30.47.3"];
      const resolve = async () => {
        if (answer instanceof Error) throw answer;
        return answer;
      };
      const sourceOf = createRequestSource(["tunnel"], { resolve, now: () => now });
      await settle();
      answer = ["172.30.47.9"]; // the tunnel restarted on another address
      expect(sourceOf(request("172.30.47.9", header))).toBe("172.30.47.9");
      now += TRUSTED_NAME_RETRY_MS;
      expect(sourceOf(request("172.30.47.9", header))).toBe("172.30.47.9"); // a miss asks for a new lookup
      await settle();
      expect(sourceOf(request("172.30.47.9", header))).toBe("198.51.100.9");
      expect(sourceOf(request("172.30.47.3", header))).toBe("172.30.47.3");
      answer = new Error("EAI_AGAIN");
      now += TRUSTED_NAME_TTL_MS;
      sourceOf(request("172.30.47.9", header));
      await settle();
      expect(sourceOf(request("172.30.47.9", header))).toBe("198.51.100.9");
    });
  });
});
