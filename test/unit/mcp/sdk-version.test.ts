// The MCP edge copies or wraps private SDK behaviour (server/mcp/sdk-version.ts): an SDK upgrade must be a
// deliberate step that re-verifies it, never a lockfile refresh that slips through.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { VERIFIED_MCP_SDK_VERSION } from "../../../server/mcp/sdk-version.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

describe("the MCP SDK version the edge was verified against", () => {
  it("is the version installed", () => {
    const require = createRequire(path.join(ROOT, "package.json"));
    const manifest = path.join(path.dirname(require.resolve("@modelcontextprotocol/server")), "..", "package.json");
    expect((JSON.parse(fs.readFileSync(manifest, "utf8")) as { version: string }).version).toBe(
      VERIFIED_MCP_SDK_VERSION,
    );
  });

  it("is the exact version package.json asks for (no range)", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies["@modelcontextprotocol/server"]).toBe(VERIFIED_MCP_SDK_VERSION);
  });
});
