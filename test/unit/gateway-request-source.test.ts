import type http from "node:http";
import { describe, expect, it } from "vitest";
import { createRequestSource, parseCidr } from "../../server/gateway/request-source.js";

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
    ["the peer is a trusted proxy", ["172.30.47.0/24"], "172.30.47.2", { "cf-connecting-ip": "198.51.100.9" }, "198.51.100.9"],
    ["the peer is an IPv4-mapped trusted proxy", ["172.30.47.0/24"], "::ffff:172.30.47.2", { "cf-connecting-ip": "2001:DB8::1" }, "2001:db8::1"],
    ["the peer is outside the trusted range", ["172.30.47.0/24"], "172.30.48.2", { "cf-connecting-ip": "198.51.100.9" }, "172.30.48.2"],
    ["a trusted proxy sends no header", ["172.30.47.0/24"], "172.30.47.2", {}, "172.30.47.2"],
    ["a trusted proxy sends a list", ["172.30.47.0/24"], "172.30.47.2", { "cf-connecting-ip": "198.51.100.9, 10.0.0.1" }, "172.30.47.2"],
    ["a trusted proxy sends the header twice", ["172.30.47.0/24"], "172.30.47.2", { "cf-connecting-ip": ["198.51.100.9", "10.0.0.1"] }, "172.30.47.2"],
  ])("keys on the right address when %s", (_label, trusted, peer, headers, expected) => {
    expect(createRequestSource(trusted)(request(peer, headers))).toBe(expected);
  });
});
