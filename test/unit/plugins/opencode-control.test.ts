// The OpenCode Control plugin's pure parts: the worker permission ceiling per project permission, message ids in
// OpenCode's ascending format, fingerprinted pages, and the loopback-only URL setting.
import { describe, expect, it } from "vitest";
import { workerRules } from "../../../plugins/opencode-control/authority.js";
import { ascendingMessageId } from "../../../plugins/opencode-control/ids.js";
import { pageOf, textPageOf } from "../../../plugins/opencode-control/pages.js";
import { TEXT_PAGE_CHARS } from "../../../plugins/opencode-control/settings.js";
import { ConfigError, loadConfig } from "../../../server/config.js";

const denied = (write: boolean, terminal: boolean, nested = false) =>
  workerRules({ write, terminal, nested })
    .filter((r) => r.action === "deny")
    .map((r) => (r.pattern === "*" ? r.permission : `${r.permission}:${r.pattern}`));

describe("worker permission ceiling", () => {
  it.each([
    {
      write: false,
      terminal: false,
      nested: false,
      expected: ["external_directory", "task", "edit", "write", "patch", "multiedit", "bash"],
    },
    { write: true, terminal: false, nested: false, expected: ["external_directory", "task", "bash"] },
    {
      write: false,
      terminal: true,
      nested: false,
      expected: ["external_directory", "task", "edit", "write", "patch", "multiedit", "bash:git", "bash:git *"],
    },
    { write: true, terminal: true, nested: false, expected: ["external_directory", "task"] },
    { write: true, terminal: true, nested: true, expected: ["external_directory"] },
  ])("write=$write terminal=$terminal nested=$nested denies $expected", ({ write, terminal, nested, expected }) => {
    expect(denied(write, terminal, nested)).toEqual(expected);
  });
});

describe("ascending message ids", () => {
  it("have OpenCode's shape and sort in the order they were made, also within one millisecond", () => {
    const ids = [
      ascendingMessageId(1_796_000_000_000),
      ascendingMessageId(1_796_000_000_000),
      ascendingMessageId(1_796_000_000_001),
      ascendingMessageId(1_795_000_000_000),
    ];
    for (const id of ids) expect(id).toMatch(/^msg_[0-9a-f]{12}[0-9A-Za-z]{14}$/);
    const prefixes = ids.map((id) => id.slice(0, 16));
    expect([...prefixes].sort()).toEqual(prefixes);
    expect(new Set(prefixes).size).toBe(4);
  });
});

describe("fingerprinted pages", () => {
  const rows = Array.from({ length: 5 }, (_, i) => ({ id: `r${i}` }));
  it("pages a list and refuses a later page of a changed list", () => {
    const first = pageOf(rows, (r) => r.id, { limit: 2 });
    expect(first.items.map((r) => r.id)).toEqual(["r0", "r1"]);
    expect(first.page).toMatchObject({ total: 5, nextOffset: 2 });
    expect(
      pageOf(rows, (r) => r.id, { offset: 2, limit: 2, fingerprint: first.page.fingerprint }).items.map((r) => r.id),
    ).toEqual(["r2", "r3"]);
    expect(() =>
      pageOf([...rows, { id: "r5" }], (r) => r.id, { offset: 2, fingerprint: first.page.fingerprint }),
    ).toThrow(expect.objectContaining({ code: "page_changed" }));
    expect(() => pageOf(rows, (r) => r.id, { offset: 2 })).toThrow(
      expect.objectContaining({ code: "missing_parameter" }),
    );
  });

  it("pages a long text without splitting a surrogate pair", () => {
    const text = `${"a".repeat(TEXT_PAGE_CHARS - 1)}\u{1F600}tail`;
    const first = textPageOf(text, {});
    expect(first).toMatchObject({ textComplete: false, nextTextOffset: TEXT_PAGE_CHARS - 1 });
    const second = textPageOf(text, { textOffset: first.nextTextOffset, textFingerprint: first.textFingerprint });
    expect(first.text + second.text).toBe(text);
    expect(second.textComplete).toBe(true);
    expect(() => textPageOf(`${text}!`, { textOffset: 1, textFingerprint: first.textFingerprint })).toThrow(
      expect.objectContaining({ code: "page_changed" }),
    );
  });
});

describe("URLBRIDGE_OPENCODE_URL", () => {
  it.each(["http://127.0.0.1:4096", "http://localhost:4545", "http://[::1]:4096", "http://127.0.0.1:4096/"])(
    "accepts %s",
    (value) => {
      expect(loadConfig({ URLBRIDGE_OPENCODE_URL: value, HOME: "/tmp" }).opencode.url).toBe(new URL(value).origin);
    },
  );
  it.each([
    "https://127.0.0.1:4096",
    "http://10.0.0.2:4096",
    "http://opencode:4096",
    "http://127.0.0.1:4096/api",
    "http://u:p@127.0.0.1:4096",
    "http://127.0.0.2:4096",
  ])("refuses %s", (value) => {
    expect(() => loadConfig({ URLBRIDGE_OPENCODE_URL: value, HOME: "/tmp" })).toThrow(ConfigError);
  });
  it("defaults to the loopback 4096 origin, enabled but not configured, 8 workers, no password", () => {
    expect(loadConfig({ HOME: "/tmp" }).opencode).toEqual({
      enabled: true,
      configured: false,
      url: "http://127.0.0.1:4096",
      username: "opencode",
      password: undefined,
      allowExisting: true,
      allowNested: false,
      maxWorkers: 8,
    });
    expect(() => loadConfig({ HOME: "/tmp", URLBRIDGE_OPENCODE_MAX_WORKERS: "17" })).toThrow(ConfigError);
  });
  it.each([
    ["URLBRIDGE_OPENCODE_PASSWORD", "a-password-of-sixteen-chars"],
    ["URLBRIDGE_OPENCODE_URL", "http://127.0.0.1:4097"],
    ["URLBRIDGE_OPENCODE_ENABLED", "true"],
  ])("counts it configured once %s is given", (key, value) => {
    expect(loadConfig({ HOME: "/tmp", [key]: value }).opencode.configured).toBe(true);
  });
});
