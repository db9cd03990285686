// The web tools, webfetch and websearch, built from the operator's configuration: the guard's allowlist and
// resolver, the search providers' keys and endpoints. Both need the project's `web` permission.
import type { AnyToolDefinition } from "../tool/definition.js";
import { EMPTY_WEB_ALLOWLIST, type WebAllowlist } from "./guard/allowlist.js";
import type { NetworkInterfaces } from "./guard/own-networks.js";
import { systemResolver, type WebResolver } from "./guard/vet.js";
import type { WebSearchConfig } from "./search/provider.js";
import { createWebfetchTool } from "./webfetch.js";
import { createWebsearchTool } from "./websearch.js";

export interface WebToolsOptions {
  allow?: WebAllowlist;
  search?: WebSearchConfig;
  /** Name resolution (dns.lookup by default); a test injects a stand-in at this boundary. */
  resolve?: WebResolver;
  /** The bridge's own interfaces (os.networkInterfaces by default). */
  interfaces?: NetworkInterfaces;
  now?: () => number;
}

export function createWebTools(options: WebToolsOptions = {}): AnyToolDefinition[] {
  const guard = {
    allow: options.allow ?? EMPTY_WEB_ALLOWLIST,
    resolve: options.resolve ?? systemResolver,
    ...(options.interfaces ? { interfaces: options.interfaces } : {}),
  };
  return [
    createWebfetchTool({ guard, ...(options.now ? { now: options.now } : {}) }),
    createWebsearchTool(options.search ?? { brave: undefined, tavily: undefined, prefer: undefined }),
  ];
}
