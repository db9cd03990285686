import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createReadTools } from "../../../server/kernel/index.js";

// MCP publishes each tool's output schema as JSON Schema (issue 12), and requires an object at the top level.
const tools = createReadTools({ grepEngine: "fallback" });

describe("read tool output schemas as JSON Schema", () => {
  it("every read tool declares one", () => {
    expect(tools.filter((tool) => tool.output === undefined).map((tool) => tool.id)).toEqual([]);
  });

  it.each(tools.map((tool) => [tool.id, tool] as const))(
    "%s converts to a closed object schema whose ok is true",
    (_id, tool) => {
      const json = z.toJSONSchema(tool.output!) as {
        type?: string;
        properties?: Record<string, { const?: unknown }>;
        required?: string[];
        additionalProperties?: unknown;
      };
      expect(json.type).toBe("object");
      expect(json.properties?.ok?.const).toBe(true);
      expect(json.required).toContain("ok");
      expect(json.additionalProperties).toBe(false);
      // Every top-level field says what it is for, except ok.
      const undescribed = Object.entries(json.properties ?? {}).filter(
        ([name, field]) => name !== "ok" && !("description" in field),
      );
      expect(undescribed.map(([name]) => name)).toEqual([]);
    },
  );
});
