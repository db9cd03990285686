// The read-only tools, in the order the manifest lists them.
import type { AnyToolDefinition } from "./tool.js";
import { statTool } from "./stat.js";

export const readTools: AnyToolDefinition[] = [statTool];
