// The plugin's settings: server/config.ts parses URLBRIDGE_OPENCODE_* once; this folder only reads the result.
// Limits of our own (waits, pages) are named here so docs/PLUGINS.md and the tools quote the same numbers.
import type { OpenCodeConfig } from "../../server/config.js";

/** `configured` left out means set up (tests and embedders pass what they use). */
export type OpenCodeSettings = Omit<OpenCodeConfig, "enabled" | "configured"> & { configured?: boolean };

export const PLUGIN_ID = "opencode-control";
/** A wait answers within this, well under the tunnel's 100 s; the answer carries a poll URL to wait more. */
export const WAIT_DEFAULT_MS = 20_000;
export const WAIT_MAX_MS = 45_000;
/** How often a wait reads the turn again. */
export const WAIT_POLL_MS = 300;
/** Rows per list page, and characters per text page. */
export const PAGE_DEFAULT = 20;
export const PAGE_MAX = 50;
export const TEXT_PAGE_CHARS = 12_000;
/** Message previews in session message lists. */
export const PREVIEW_CHARS = 512;
/** Workers per swarm. */
export const SWARM_MAX = 8;
/** Prompt text an agent may send in one call. */
export const PROMPT_MAX_CHARS = 64_000;
