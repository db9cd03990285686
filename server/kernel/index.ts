// The read-only tools, in the order the manifest lists them.
import { findTool } from "./find.js";
import { createGrepEngine, type GrepEngineSetting } from "./grep-search.js";
import { createGrepTool } from "./grep.js";
import { outlineTool } from "./outline.js";
import { projectTool } from "./project.js";
import { readTool } from "./read.js";
import { statTool } from "./stat.js";
import type { AnyToolDefinition } from "./tool.js";

export interface ReadToolsOptions {
  /** Which /g engine answers: ripgrep when on PATH (auto), always rg, or always the portable engine. */
  grepEngine?: GrepEngineSetting;
}

export function createReadTools(options: ReadToolsOptions = {}): AnyToolDefinition[] {
  return [readTool, findTool, createGrepTool(createGrepEngine(options.grepEngine ?? "auto")), outlineTool, statTool, projectTool];
}

/** The read tools with default options. */
export const readTools: AnyToolDefinition[] = createReadTools();
