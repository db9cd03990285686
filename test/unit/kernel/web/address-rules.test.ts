import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { ADDRESS_RANGES, embeddedIpv4, rangeRuleOf } from "../../../../server/kernel/web/guard/address-rules.js";
import { allowEntryProblem } from "../../../../server/config-checks.js";
import { parseWebAllowlist } from "../../../../server/kernel/web/guard/allowlist.js";
import { ownNetworks } from "../../../../server/kernel/web/guard/own-networks.js";
import { classifyAddress } from "../../../../server/kernel/web/guard/vet.js";

describe("webfetch address classifier", () => {
  it.each([
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.254", "private"],
    ["192.168.1.1", "private"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["169.254.169.254", "link_local"],
    ["169.254.0.1", "link_local"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.254", "cgnat"],
    ["224.0.0.251", "multicast"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "reserved"],
    ["192.0.0.8", "reserved"],
    ["198.18.0.1", "reserved"],
    ["192.0.2.1", "documentation"],
    ["198.51.100.7", "documentation"],
    ["203.0.113.9", "documentation"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["::ffff:127.0.0.1", "ipv4_mapped"],
    ["::ffff:7f00:1", "ipv4_mapped"],
    ["::ffff:8.8.8.8", "ipv4_mapped"],
    ["::127.0.0.1", "ipv4_embedded"],
    ["64:ff9b::7f00:1", "nat64"],
    ["64:ff9b::a9fe:a9fe", "nat64"],
    ["64:ff9b:1::1", "nat64"],
    ["2002:7f00:1::1", "ipv4_embedded"],
    ["2001::1", "reserved"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["fc00::1", "unique_local"],
    ["fd00:ec2::254", "unique_local"],
    ["fe80::1", "link_local"],
    ["febf::1", "link_local"],
    ["fec0::1", "reserved"],
    ["ff02::1", "multicast"],
    ["100::1", "reserved"],
    ["4000::1", "reserved"],
  ])("refuses %s as %s", (address, rule) => {
    expect(rangeRuleOf(address)).toBe(rule);
  });

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "172.32.0.1",
    "100.128.0.1",
    "192.169.0.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001:82a::200e",
  ])("lets public %s through", (address) => {
    expect(rangeRuleOf(address)).toBeUndefined();
  });

  it.each([
    ["::ffff:127.0.0.1", "ipv4_mapped", "127.0.0.1"],
    ["64:ff9b::a9fe:a9fe", "nat64", "169.254.169.254"],
    ["2002:c0a8:101::1", "ipv4_embedded", "192.168.1.1"],
    ["::10.0.0.1", "ipv4_embedded", "10.0.0.1"],
  ] as const)("names the IPv4 address %s carries", (address, rule, inside) => {
    expect(embeddedIpv4(address, rule)).toBe(inside);
  });

  it("refuses the bridge's own networks whatever their range, from the interfaces it has", () => {
    const interfaces = () => ({
      eth0: [
        {
          address: "93.184.215.20",
          netmask: "255.255.255.0",
          family: "IPv4" as const,
          mac: "",
          internal: false,
          cidr: "93.184.215.20/24",
        },
      ],
      eth1: [
        {
          address: "2a01:4f8::5",
          netmask: "ffff:ffff:ffff:ffff::",
          family: "IPv6" as const,
          mac: "",
          internal: false,
          cidr: "2a01:4f8::5/64",
          scopeid: 0,
        },
      ],
    });
    const none = parseWebAllowlist([]);
    expect(classifyAddress("93.184.215.99", none, interfaces)).toEqual({
      rule: "bridge_network",
      network: "93.184.215.20/24 (eth0)",
    });
    expect(classifyAddress("2a01:4f8::abcd", none, interfaces)).toEqual({
      rule: "bridge_network",
      network: "2a01:4f8::5/64 (eth1)",
    });
    expect(classifyAddress("93.184.216.1", none, interfaces)).toBeUndefined();
    expect(ownNetworks(interfaces).containing("8.8.8.8")).toBeUndefined();
  });

  it("lets an allowed range through and nothing next to it; an IPv4 range never matches a mapped IPv6 address", () => {
    const allow = parseWebAllowlist(["10.1.2.0/24", "fd12::/16", "127.0.0.1"]);
    expect(classifyAddress("10.1.2.3", allow)).toBeUndefined();
    expect(classifyAddress("10.1.3.1", allow)).toEqual({ rule: "private" });
    expect(classifyAddress("fd12::1", allow)).toBeUndefined();
    expect(classifyAddress("127.0.0.1", allow)).toBeUndefined();
    expect(classifyAddress("127.0.0.2", allow)).toEqual({ rule: "loopback" });
    expect(classifyAddress("::ffff:127.0.0.1", allow)).toEqual({ rule: "ipv4_mapped", embedded: "127.0.0.1" });
  });

  it.each([
    ["wiki.lan", undefined],
    ["10.0.0.0/8", undefined],
    ["[fd00::1]", undefined],
    ["fd00::/8", undefined],
    ["10.0.0.0/33", "prefix length"],
    ["wiki.lan/24", "not an IP address"],
    ["wiki.lan:8080", "neither"],
    ["http://wiki.lan", "more than one"],
    ["a/b/c", "more than one"],
  ])("checks URLBRIDGE_WEB_ALLOW entry %s", (entry, problem) => {
    const found = allowEntryProblem(entry);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  it("is the table docs/SECURITY.md shows, row for row", () => {
    const doc = fs.readFileSync(new URL("../../../../docs/SECURITY.md", import.meta.url), "utf8");
    const table = doc.slice(doc.indexOf("| range | rule | why |"));
    const lines = table.split("\n");
    const rows = lines
      .slice(
        2,
        lines.findIndex((line) => !line.startsWith("|")),
      )
      .map((line) =>
        line
          .split("|")
          .slice(1, 4)
          .map((cell) => cell.trim().replace(/`/g, "")),
      );
    expect(rows).toEqual(ADDRESS_RANGES.map((r) => [r.cidr, r.rule, r.why]));
  });
});
