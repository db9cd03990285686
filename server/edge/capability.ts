// What both edges know of an authenticated capability token and of the throttle that answers unknown ones
// (created by gateway/authenticate.ts and gateway/unknown-token-throttle.ts, used by the MCP edge as well).
import type http from "node:http";
import type { CapabilityBase } from "../kernel/tool/definition.js";
import type { CapabilityLookup } from "../store/sessions.js";

export interface Authenticated {
  cap: CapabilityLookup;
  base: CapabilityBase;
  tokens: { r: string; m: string | undefined };
}

export interface UnknownTokenThrottle {
  /** Answers an unknown token with the opaque 404, held as the source's recent misses ask. */
  answer(res: http.ServerResponse, source: string): void;
  /**
   * Refuses an unknown token some other way (`send`), held and counted as answer's 404 is; `gone` says the asker
   * left meanwhile (nobody to send to).
   */
  refuse(source: string, send: () => void, gone: () => boolean): void;
}
