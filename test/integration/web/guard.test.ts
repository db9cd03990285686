// webfetch's guard end to end: every refused range and spelling, a redirect from an allowed host to a refused one,
// and a name whose resolution changes between two lookups (a DNS stand-in injected at the process boundary), all
// refused before any connection to the refused address. Only 127.0.0.1 is allowed (URLBRIDGE_WEB_ALLOW); a second
// site listens on 127.0.0.2, on the same port, and must never see a connection.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { createDnsStandIn, type DnsStandIn } from "../../helpers/dns-stand-in.js";
import { answer, startWebSite, type WebSite } from "../../helpers/web-site.js";

let t: TestBridge;
let s: AgentSession;
let allowed: WebSite;
let refused: WebSite;
let dns: DnsStandIn;

interface Answer {
  ok: boolean;
  errorCode?: string;
  errorDetail?: { rule?: string; address?: string; host?: string; embedded?: string; network?: string };
  repairHint?: string;
  content?: string;
}

const webfetch = (url: string) => agentGet<Answer>(`${s.r}/u?raw=${url}`);

beforeAll(async () => {
  allowed = await startWebSite({
    "/page": answer("<p>the allowed site</p>"),
    "/to-refused": (_req, res) => res.writeHead(302, { location: `http://127.0.0.2:${allowed.port}/secret` }).end(),
    "/to-metadata": (_req, res) => res.writeHead(307, { location: "http://metadata.test/latest/meta-data/" }).end(),
    "/to-mapped": (_req, res) => res.writeHead(301, { location: `http://[::ffff:127.0.0.2]:${allowed.port}/` }).end(),
    "/loop": (_req, res) => res.writeHead(302, { location: "/loop" }).end(),
  });
  // Same port, other loopback address: what a second lookup, or a redirect, would reach if the guard let it.
  refused = await startWebSite(
    { "/secret": answer("<p>the operator's own service</p>"), "/page": answer("<p>the refused site</p>") },
    "127.0.0.2",
    allowed.port,
  );
  dns = createDnsStandIn(
    {
      "docs.test": [["127.0.0.1"]],
      "metadata.test": [["169.254.169.254"]],
      "lan.test": [["192.168.1.10"]],
      "mixed.test": [["127.0.0.1", "10.0.0.5"]],
      "v6lan.test": [["fd00::5"]],
      "own.test": [["93.184.215.30"]],
      // DNS rebinding: the first answer is allowed, every later one is the refused address, and the reverse.
      "rebind.test": [["127.0.0.1"], ["127.0.0.2"]],
      "rebind-back.test": [["127.0.0.2"], ["127.0.0.1"]],
    },
    ["silent.test"],
  );
  // The bridge's interfaces as the test says they are: one network in public space (a VPS's own /24).
  const interfaces = () => ({
    lo: [
      {
        address: "127.0.0.1",
        netmask: "255.0.0.0",
        family: "IPv4" as const,
        mac: "00:00:00:00:00:00",
        internal: true,
        cidr: "127.0.0.1/8",
      },
    ],
    eth0: [
      {
        address: "93.184.215.20",
        netmask: "255.255.255.0",
        family: "IPv4" as const,
        mac: "02:00:00:00:00:01",
        internal: false,
        cidr: "93.184.215.20/24",
      },
    ],
  });
  t = await startTestBridge({ URLBRIDGE_WEB_ALLOW: "127.0.0.1/32" }, { web: { resolve: dns.resolve, interfaces } });
  s = await t.session({ web: true });
});

afterAll(async () => {
  await t.close();
  await allowed.close();
  await refused.close();
});

describe("webfetch guard", () => {
  it("reaches the allowed address, by literal and by name", async () => {
    expect(await webfetch(`${allowed.origin}/page`)).toMatchObject({ ok: true, content: "the allowed site" });
    expect(await webfetch(`http://docs.test:${allowed.port}/page`)).toMatchObject({
      ok: true,
      content: "the allowed site",
    });
  });

  const port = () => allowed.port;
  it.each<[string, () => string, string]>([
    ["loopback", () => `http://127.0.0.2:${port()}/page`, "loopback"],
    ["hex and short form 0x7f.0.0.2", () => `http://0x7f.0.0.2:${port()}/page`, "loopback"],
    ["one decimal number 2130706434", () => `http://2130706434:${port()}/page`, "loopback"],
    ["octal 0177.0.0.2", () => `http://0177.0.0.2:${port()}/page`, "loopback"],
    ["a trailing dot", () => `http://127.0.0.2.:${port()}/page`, "loopback"],
    ["IPv4-mapped [::ffff:127.0.0.2]", () => `http://[::ffff:127.0.0.2]:${port()}/page`, "ipv4_mapped"],
    [
      "IPv4-mapped of an allowed address [::ffff:127.0.0.1]",
      () => `http://[::ffff:127.0.0.1]:${port()}/page`,
      "ipv4_mapped",
    ],
    ["NAT64 [64:ff9b::7f00:2]", () => `http://[64:ff9b::7f00:2]:${port()}/page`, "nat64"],
    ["IPv6 loopback [::1]", () => `http://[::1]:${port()}/page`, "loopback"],
    ["localhost by name", () => `http://localhost:${port()}/page`, "loopback"],
    ["localhost. with a trailing dot", () => `http://LOCALHOST.:${port()}/page`, "loopback"],
    ["a *.localhost name", () => `http://app.localhost:${port()}/page`, "loopback"],
    ["0.0.0.0 (http://0/)", () => `http://0:${port()}/page`, "unspecified"],
    ["RFC 1918 10/8", () => "http://10.0.0.1/", "private"],
    ["RFC 1918 172.16/12 (Docker)", () => "http://172.17.0.1/", "private"],
    ["RFC 1918 192.168/16", () => "http://192.168.0.1/", "private"],
    ["the metadata service", () => "http://169.254.169.254/latest/meta-data/", "link_local"],
    ["CGNAT", () => "http://100.64.0.1/", "cgnat"],
    ["multicast", () => "http://224.0.0.1/", "multicast"],
    ["reserved 240/4", () => "http://240.0.0.1/", "reserved"],
    ["broadcast", () => "http://255.255.255.255/", "reserved"],
    ["documentation 192.0.2/24", () => "http://192.0.2.1/", "documentation"],
    ["documentation 2001:db8::/32", () => "http://[2001:db8::1]/", "documentation"],
    ["IPv6 ULA", () => "http://[fd00::1]/", "unique_local"],
    ["IPv6 link-local", () => "http://[fe80::1]/", "link_local"],
    ["6to4 carrying 127.0.0.2", () => "http://[2002:7f00:2::1]/", "ipv4_embedded"],
    ["a name for the metadata service", () => "http://metadata.test/latest/meta-data/", "link_local"],
    ["a name for a LAN host", () => "http://lan.test/", "private"],
    ["a name with one public and one private answer", () => `http://mixed.test:${port()}/page`, "private"],
    ["a name for an IPv6 ULA", () => "http://v6lan.test/", "unique_local"],
    ["a name on the bridge's own network", () => "http://own.test/", "bridge_network"],
    ["a redirect from the allowed host to a refused one", () => `${allowed.origin}/to-refused`, "loopback"],
    ["a redirect to the metadata service by name", () => `${allowed.origin}/to-metadata`, "link_local"],
    ["a redirect to an IPv4-mapped spelling", () => `${allowed.origin}/to-mapped`, "ipv4_mapped"],
  ])("refuses %s, naming the rule", async (_label, url, rule) => {
    const found = await webfetch(url());
    expect(found, url()).toMatchObject({ ok: false, errorCode: "web_address_refused", errorDetail: { rule } });
    expect(found.repairHint).toContain(`rule ${rule}`);
    expect(found.repairHint).toContain("URLBRIDGE_WEB_ALLOW");
  });

  it("names what an IPv6 form carries and the own network that matched", async () => {
    expect((await webfetch(`http://[::ffff:127.0.0.2]:${port()}/`)).errorDetail).toMatchObject({
      address: "::ffff:7f00:2",
      embedded: "127.0.0.2",
    });
    expect((await webfetch("http://own.test/")).errorDetail).toMatchObject({
      host: "own.test",
      address: "93.184.215.30",
      network: "93.184.215.20/24 (eth0)",
    });
  });

  it("stops following redirects after the limit", async () => {
    expect(await webfetch(`${allowed.origin}/loop`)).toMatchObject({ ok: false, errorCode: "web_too_many_redirects" });
  });

  it("connects to the address it checked: a name that rebinds after the check still reaches the first answer", async () => {
    const before = dns.lookups.get("rebind.test") ?? 0;
    expect(await webfetch(`http://rebind.test:${port()}/page`)).toMatchObject({
      ok: true,
      content: "the allowed site",
    });
    // One lookup per hop: the connection used the vetted answer, not a second query.
    expect(dns.lookups.get("rebind.test")).toBe(before + 1);
    // The next call looks up afresh and gets the refused answer: refused.
    expect(await webfetch(`http://rebind.test:${port()}/page`)).toMatchObject({
      ok: false,
      errorCode: "web_address_refused",
      errorDetail: { rule: "loopback", address: "127.0.0.2" },
    });
    expect(dns.lookups.get("rebind.test")).toBe(before + 2);
  });

  it("refuses a name whose first answer is refused, whatever a later lookup would say", async () => {
    expect(await webfetch(`http://rebind-back.test:${port()}/page`)).toMatchObject({
      ok: false,
      errorCode: "web_address_refused",
      errorDetail: { rule: "loopback" },
    });
    expect(dns.lookups.get("rebind-back.test")).toBe(1);
  });

  it("answers a name that does not resolve as web_dns_failed", async () => {
    expect(await webfetch("http://nowhere.test/")).toMatchObject({
      ok: false,
      errorCode: "web_dns_failed",
      errorDetail: { host: "nowhere.test", code: "ENOTFOUND" },
    });
  });

  it("bounds a lookup that never answers by the call's timeout", async () => {
    expect(await agentGet(`${s.r}/u?timeout=1&raw=http://silent.test/`)).toMatchObject({
      ok: false,
      errorCode: "web_timeout",
      errorDetail: { host: "silent.test" },
    });
  });

  // Runs last: every refusal above happened before any connection to the refused address.
  it("never connected to the refused site", () => {
    expect(refused.connections).toBe(0);
    expect(refused.requests).toEqual([]);
  });
});
