// The read-only tools, in the order the manifest lists them.
import { findTool } from "./search/find.js";
import { createGrepEngine, type GrepEngineSetting } from "./search/grep-search.js";
import { createGrepTool } from "./search/grep.js";
import { createSearchGate, type SearchGateOptions } from "./search/search-gate.js";
import { outlineTool } from "./read/outline.js";
import { projectTool } from "./read/project.js";
import { readTool } from "./read/read.js";
import { statTool } from "./read/stat.js";
import type { AnyToolDefinition } from "./tool/definition.js";
import type { Sandbox } from "../sandbox/launcher.js";
import { createGitRunner } from "./vcs/git-process.js";
import { createGitTool } from "./vcs/git.js";

export interface ReadToolsOptions {
  /** Which /g engine answers: ripgrep when on PATH (auto), always rg, or always the portable engine. */
  grepEngine?: GrepEngineSetting;
  /** The bridge's search slots (default MAX_CONCURRENT_SEARCHES, search-gate.ts); one set per call of this. */
  searchGate?: SearchGateOptions;
  /** Confines git for /v as terminal commands are confined (project read-only); without one git runs unconfined. */
  sandbox?: Sandbox;
}

export function createReadTools(options: ReadToolsOptions = {}): AnyToolDefinition[] {
  // /g and /v share the bridge's slots for work that runs child processes over the whole project.
  const gate = createSearchGate(options.searchGate);
  return [
    readTool,
    findTool,
    createGrepTool(createGrepEngine(options.grepEngine ?? "auto"), gate),
    outlineTool,
    statTool,
    projectTool,
    createGitTool(createGitRunner(options.sandbox), gate),
  ];
}
