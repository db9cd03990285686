import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  CONTROL_ERROR_STATUS,
  ControlError,
  ControlErrorCode,
  controlErrorBody,
  notFound,
} from "../../../server/control/errors.js";

const CONTROL_PLANE = fs.readFileSync(path.join(import.meta.dirname, "../../../docs/CONTROL_PLANE.md"), "utf8");

/** The `| code | status | when |` rows of docs/CONTROL_PLANE.md "## Error codes", as [code, status]. */
function documentedStatuses(): Array<[string, number]> {
  const section = CONTROL_PLANE.slice(CONTROL_PLANE.indexOf("\n## Error codes\n"));
  const lines = section.split("\n");
  const header = lines.findIndex((line) => line.startsWith("| code | status |"));
  expect(header, "the error table of docs/CONTROL_PLANE.md").toBeGreaterThan(-1);
  const rows: Array<[string, number]> = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break;
    const [code, status] = line
      .slice(1, -1)
      .split(" | ")
      .map((cell) => cell.trim());
    rows.push([code!.replace(/`/g, ""), Number(status)]);
  }
  return rows;
}

describe("the control-plane error catalog", () => {
  it("gives every code exactly one status, and names no code twice", () => {
    const codes = Object.values(ControlErrorCode);
    expect(new Set(codes).size).toBe(codes.length);
    expect(Object.keys(CONTROL_ERROR_STATUS).sort()).toEqual([...codes].sort());
    for (const status of Object.values(CONTROL_ERROR_STATUS)) expect(status >= 400 && status < 600).toBe(true);
  });

  it("matches the table in docs/CONTROL_PLANE.md code for code and status for status", () => {
    const rows = documentedStatuses();
    expect(new Set(rows.map(([code]) => code)).size).toBe(rows.length);
    expect(Object.fromEntries(rows)).toEqual(CONTROL_ERROR_STATUS);
  });

  it("answers an error with its catalogued status", () => {
    const error = new ControlError(ControlErrorCode.projectNameTaken, 'A project named "demo" already exists.');
    expect(error).toMatchObject({ status: 409, code: "project_name_taken", name: "ControlError" });
    expect(notFound("project", "p1")).toMatchObject({
      status: 404,
      code: "not_found",
      message: 'No project with id "p1".',
    });
  });

  it("serialises a body as {error: {code, message}}, in that key order", () => {
    expect(
      JSON.stringify(controlErrorBody(ControlErrorCode.internalError, "Unexpected error; see the server log.")),
    ).toBe('{"error":{"code":"internal_error","message":"Unexpected error; see the server log."}}');
  });
});

// Type-level check, compiled by `tsc -p tsconfig.test.json` and never run.
export function typeChecks(): void {
  // @ts-expect-error an uncatalogued control code does not compile
  new ControlError("no_such_code", "x");
}
