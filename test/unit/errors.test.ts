import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ERROR_CATALOG,
  ErrorCode,
  isErrorCode,
  retryableOf,
  toFailure,
  ToolError,
  type ErrorCodeInfo,
} from "../../server/errors.js";

const PROTOCOL = fs.readFileSync(path.join(import.meta.dirname, "../../docs/PROTOCOL.md"), "utf8");
const catalog: Record<string, ErrorCodeInfo> = ERROR_CATALOG;
const codes = Object.values(ErrorCode) as string[];

/** The rows of the first table after `heading`, as cells without their backticks. */
function tableAfter(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(`\n${heading}\n`);
  expect(start, `${heading} is in docs/PROTOCOL.md`).toBeGreaterThan(-1);
  const lines = markdown.slice(start).split("\n");
  const first = lines.findIndex((line) => line.startsWith("|"));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split(" | ")
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

describe("the error catalog", () => {
  it("has exactly one entry per ErrorCode, and every code's wire name is unique", () => {
    expect(Object.keys(ERROR_CATALOG).sort()).toEqual([...codes].sort());
    expect(new Set(codes).size).toBe(codes.length);
  });

  it("gives both containment refusals the same answer: neither is retryable", () => {
    expect(retryableOf(ErrorCode.pathOutsideRoot)).toBe(false);
    expect(retryableOf(ErrorCode.symlinkEscape)).toBe(retryableOf(ErrorCode.pathOutsideRoot));
  });

  it.each([
    ErrorCode.pathChanged,
    ErrorCode.stateStoreUnavailable,
    ErrorCode.terminalBusy,
    ErrorCode.backgroundLimitReached,
  ])("marks the transient %s retryable", (code) => expect(retryableOf(code)).toBe(true));

  it.each([
    ErrorCode.unknownParameter,
    ErrorCode.invalidParameter,
    ErrorCode.editNoMatch,
    ErrorCode.commandTimedOut,
    ErrorCode.toolNotEnabled,
  ])("marks %s, which needs a changed request or the operator, not retryable", (code) =>
    expect(retryableOf(code)).toBe(false),
  );

  it("explains every code that may answer both ways", () => {
    const varying = Object.entries(catalog).filter(([, info]) => info.varies !== undefined);
    expect(varying.map(([code]) => code).sort()).toEqual([
      "git_failed",
      "internal_error",
      "interrupted",
      "patch_commit_failed",
      "sandbox_unavailable",
      "web_dns_failed",
      "web_fetch_failed",
      "web_http_status",
      "web_search_failed",
    ]);
    for (const [, info] of varying) expect(info.varies!.length).toBeGreaterThan(20);
  });

  it("recognises catalogued codes only", () => {
    expect(isErrorCode("path_changed")).toBe(true);
    expect(isErrorCode("toString")).toBe(false);
    expect(isErrorCode("no_such_code")).toBe(false);
  });
});

describe("ToolError", () => {
  it("takes retryable from the catalog when the call site says nothing", () => {
    expect(new ToolError(ErrorCode.pathOutsideRoot, "outside").toFailure()).toMatchObject({
      errorCode: "path_outside_root",
      retryable: false,
    });
    expect(new ToolError(ErrorCode.pathChanged, "changed").retryable).toBe(true);
  });

  it("keeps the catalog's value for a code that does not vary, even when a re-thrown error's value comes along", () => {
    const code = ErrorCode.unknownParameter as ErrorCode;
    expect(new ToolError(code, "rethrown", { retryable: true as boolean }).retryable).toBe(false);
  });

  it("lets a code that varies state the other value, and defaults to the catalog's", () => {
    expect(new ToolError(ErrorCode.sandboxUnavailable, "engine down", { retryable: true }).retryable).toBe(true);
    expect(new ToolError(ErrorCode.sandboxUnavailable, "image missing").retryable).toBe(false);
    expect(new ToolError(ErrorCode.interrupted, "scope ended", { retryable: false }).retryable).toBe(false);
    expect(new ToolError(ErrorCode.interrupted, "restarted").retryable).toBe(true);
  });

  it("refuses an uncatalogued code from plain JavaScript with a message naming it", () => {
    expect(() => new ToolError("made_up" as ErrorCode, "x")).toThrow(/"made_up" is not an error code/);
  });

  it("keeps the wire shape: ok, errorCode, retryable, errorDetail, repairHint, agentAction, repair, extras", () => {
    const failure = new ToolError(ErrorCode.unknownParameter, "Unknown parameter.", {
      detail: { parameter: "pth" },
      repair: "https://x/r?path=a",
      extra: { batches: [] },
    }).toFailure();
    expect(JSON.stringify(failure)).toBe(
      '{"ok":false,"errorCode":"unknown_parameter","retryable":false,"errorDetail":{"parameter":"pth"},"repairHint":"Unknown parameter.","agentAction":"fetch_repair","repair":"https://x/r?path=a","batches":[]}',
    );
  });
});

describe("toFailure", () => {
  it.each([new Error("disk on fire at /secret/path"), "a thrown string", undefined])(
    "answers %s as a retryable internal_error without its text",
    (thrown) => {
      const failure = toFailure(thrown);
      expect(failure).toEqual({
        ok: false,
        errorCode: "internal_error",
        repairHint: expect.stringContaining("server log"),
        retryable: true,
        agentAction: "wait_and_retry",
      });
      expect(JSON.stringify(failure)).not.toContain("secret");
    },
  );

  it("passes a ToolError's own failure through", () => {
    expect(toFailure(new ToolError(ErrorCode.symlinkEscape, "escapes"))).toMatchObject({
      errorCode: "symlink_escape",
      retryable: false,
      repairHint: "escapes",
    });
  });
});

describe("docs/PROTOCOL.md §3 Every error code", () => {
  const rows = tableAfter(PROTOCOL, "### Every error code");
  const documented = rows.map(([code]) => code!.replace(/`/g, ""));

  it("lists every catalogued code once, and nothing else", () => {
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual(Object.keys(ERROR_CATALOG).sort());
  });

  it.each(rows.map((row) => [row[0]!.replace(/`/g, ""), row[1]!] as const))(
    "states the catalog's retryable for %s",
    (code, cell) => {
      const info = catalog[code]!;
      expect(cell.split(/[ (]/)[0]).toBe(info.retryable ? "yes" : "no");
      // A code that varies says when it is the other value; one that does not, does not hedge.
      expect(cell.includes("(")).toBe(info.varies !== undefined);
    },
  );

  it("names only catalogued codes in every table's code column", () => {
    const named = codeColumns(PROTOCOL);
    expect(named.length).toBeGreaterThan(100);
    expect(named.filter((name) => !isErrorCode(name))).toEqual([]);
  });
});

/** Every backticked name in a "code" or "error code" column of any table, wildcards (`staged_*`) left out. */
function codeColumns(markdown: string): string[] {
  const names: string[] = [];
  let column = -1;
  for (const line of markdown.split("\n")) {
    if (!line.startsWith("|")) {
      column = -1;
      continue;
    }
    const cells = line
      .slice(1, -1)
      .split(" | ")
      .map((cell) => cell.trim());
    if (column === -1) {
      column = cells.findIndex((cell) => cell === "code" || cell === "error code");
      if (column === -1) column = -2;
      continue;
    }
    if (column < 0 || /^-+$/.test(cells[0] ?? "")) continue;
    for (const match of (cells[column] ?? "").matchAll(/`([a-z_*]+)`/g))
      if (!match[1]!.endsWith("*")) names.push(match[1]!);
  }
  return names;
}

// Type-level checks, compiled by `tsc -p tsconfig.test.json` and never run.
export function typeChecks(): void {
  // @ts-expect-error an uncatalogued code does not compile
  new ToolError("no_such_code", "x");
  // @ts-expect-error path_outside_root is never retryable, so a call site cannot say it is
  new ToolError(ErrorCode.pathOutsideRoot, "x", { retryable: true });
  // @ts-expect-error path_changed is always retryable
  new ToolError(ErrorCode.pathChanged, "x", { retryable: false });
  // Restating the catalog's value compiles; so does either value for a code that varies.
  new ToolError(ErrorCode.symlinkEscape, "x", { retryable: false });
  new ToolError(ErrorCode.sandboxUnavailable, "x", { retryable: true });
  const failure: import("../../server/errors.js").ToolFailure = {
    ok: false,
    // @ts-expect-error a failure's errorCode is a catalogued code too
    errorCode: "no_such_code",
    retryable: false,
  };
  void failure;
}
