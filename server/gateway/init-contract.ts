// The Init contract: the one document an agent reads first. Compact and model-neutral; it gives exact
// bases and [baseRef, suffix] endpoints so URLs are built mechanically, never hand-assembled.
import { MAX_READ_PATHS } from "../kernel/limits.js";
import type { AnyToolDefinition, ProjectScope } from "../kernel/tool/definition.js";
import { MAX_WAIT_MS } from "../mutation/journal/controls.js";
import { MAX_CHUNK_BYTES } from "../mutation/staging/staging.js";
import { MAX_RAW_BYTES, MAX_REQUEST_TARGET_BYTES } from "../url-grammar/limits.js";

/** Hard ceiling for the fully enabled contract on the local test origin (1.6 KiB). */
export const MAX_INIT_CONTRACT_BYTES = 1638;

export interface InitContractInput {
  project: ProjectScope;
  readBase: string;
  mutationBase: string | undefined;
  tools: AnyToolDefinition[];
  pluginsAvailable: boolean;
}

/** Advertised endpoint suffixes, keyed by tool id, in the order an agent needs them. */
const ENDPOINTS: Array<[string, string]> = [
  ["read", "/r?path=<p>"],
  ["find", "/f?path=<dir>&name=<text>"],
  ["grep", "/g?path=<p>&raw=<text>"],
  ["outline", "/o?path=<p>"],
  ["stat", "/t?path=<p>"],
  ["project", "/p"],
  ["webfetch", "/u?raw=<url>"],
  ["websearch", "/q?raw=<query>"],
  ["write", "/w?path=<p>&raw=<content>"],
  ["edit", "/e?path=<p>&old=<text>&raw=<new>"],
  ["apply_patch", "/a?raw=<patch>"],
  ["terminal", "/x?wait=1000&raw=<cmd>"],
  ["stage", "/s?blob=<id>&i=<n>&count=<n>&raw=<chunk>"],
  ["result", "/j?call=<id>"],
];

const kib = (bytes: number) => `${bytes / 1024} KiB`;

function rules(mutation: boolean, terminal: boolean): string[] {
  const base = [
    "Fetch every URL in raw, unconverted mode.",
    "URL = bases[ref] + suffix; replace only <...>.",
    "raw= goes last: all after it is content. + is space. Escapes: ~n newline ~r CR ~t tab ~s space ~q + ~h # ~p % ~a & ~~ ~ ~uXXXX.",
    `Up to ${MAX_READ_PATHS} path= per /r, each with its own lines=a-b; max=<bytes> per page. /g: literal unless regex=1. Use next/repair/poll/retry/repeat URLs exactly as returned.`,
    "Truncated reply: /z?last=1&part=0 on the same base.",
  ];
  if (!mutation) return base;
  return [
    ...base,
    "Mutations run once: a repeated GET replays the first result; run=<nonce> runs again.",
    `wait=<ms> (≤${MAX_WAIT_MS}) on mutations and /j.${terminal ? " /x bg=1 starts a server, answers its URLs." : ""}`,
    "/e: one edit. /a: one patch (*** Begin Patch) for more edits or files. /w: after a full read.",
    `URL >${kib(MAX_REQUEST_TARGET_BYTES)} or raw >${kib(MAX_RAW_BYTES)}: stage ≤${kib(MAX_CHUNK_BYTES)} chunks with /s (20 KiB: 3), then pass blob=<id>&count=<n>.`,
  ];
}

export function buildInitContract(input: InitContractInput): Record<string, unknown> {
  const enabled = new Map(input.tools.map((t) => [t.id, t]));
  const ep: Record<string, [string, string]> = {};
  for (const [id, suffix] of ENDPOINTS) {
    const tool = enabled.get(id);
    if (!tool) continue;
    const ref = tool.capability === "read" ? "r" : "m";
    if (ref === "m" && !input.mutationBase) continue;
    ep[id] = [ref, suffix];
  }
  if (input.pluginsAvailable) ep.plugins = ["r", "/k"];
  // The mutation rules are for sessions with native mutations; a base opened only by plugins needs none of them.
  const mutation = Object.values(ep).some(([ref]) => ref === "m");
  const bases: Record<string, string> = { r: input.readBase };
  if (input.mutationBase) bases.m = input.mutationBase;
  return {
    ok: true,
    urlbridge: "v0",
    root: "/project",
    project: input.project.name,
    perms: input.project.permissions,
    bases,
    ep,
    rules: rules(mutation, ep.terminal !== undefined),
  };
}
