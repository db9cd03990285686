import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  computeCallId,
  deriveRunNonce,
  hashArguments,
} from "../../../server/mutation/journal/call-id.js";
import { RUN_NONCE_PATTERN, splitControls } from "../../../server/mutation/journal/controls.js";

describe("canonical call ids", () => {
  it("sorts keys at every depth and drops undefined members", () => {
    const a = canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } });
    const b = canonicalJson({ a: { d: [1, { y: 2, z: 1 }] }, b: 1 });
    expect(a).toBe(b);
    expect(a).toBe('{"a":{"d":[1,{"y":2,"z":1}]},"b":1}');
  });

  it("gives equal arguments in any key order the same auto id, shaped auto:<tool>:<hex>", () => {
    const one = computeCallId({ tool: "write", args: { path: "a.txt", content: "x" } });
    const two = computeCallId({ tool: "write", args: { content: "x", path: "a.txt" } });
    expect(one).toBe(two);
    expect(one).toMatch(/^auto:write:[0-9a-f]{16}$/);
  });

  it.each([
    ["another tool", { tool: "edit", args: { path: "a.txt", content: "x" } }],
    ["other content", { tool: "write", args: { path: "a.txt", content: "y" } }],
    ["a run nonce", { tool: "write", args: { path: "a.txt", content: "x" }, run: "2" }],
  ])("changes with %s", (_name, input) => {
    expect(computeCallId(input)).not.toBe(computeCallId({ tool: "write", args: { path: "a.txt", content: "x" } }));
  });

  it("uses an explicit call= verbatim", () => {
    expect(computeCallId({ tool: "write", args: { path: "a" }, call: "my-call.1" })).toBe("my-call.1");
  });

  it("keeps the argument hash independent of the run nonce", () => {
    expect(hashArguments("write", { path: "a" })).toBe(hashArguments("write", { path: "a" }));
    expect(hashArguments("write", { path: "a" })).not.toBe(hashArguments("write", { path: "b" }));
  });

  it("derives deterministic run nonces that are valid run= values", () => {
    const nonce = deriveRunNonce("auto:write:0123", "retry");
    expect(nonce).toBe(deriveRunNonce("auto:write:0123", "retry"));
    expect(nonce).not.toBe(deriveRunNonce("auto:write:0123", "repeat@2"));
    expect(nonce).toMatch(RUN_NONCE_PATTERN);
  });

  it("splits the journal controls from the semantic arguments, defaulting wait", () => {
    expect(splitControls({ path: "a", wait: 5, run: "r" })).toEqual({
      controls: { wait: 5, run: "r", call: undefined },
      rest: { path: "a" },
    });
    expect(splitControls({ path: "a" }).controls.wait).toBe(1000);
  });
});
