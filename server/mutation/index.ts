// The mutation surface: tools, the journal runner and start-up recovery.
import type { AnyToolDefinition } from "../kernel/tool.js";

export const mutationTools: AnyToolDefinition[] = [];
