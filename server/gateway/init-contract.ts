// The Init contract: the one document an agent reads first. Compact and model-neutral; it gives exact
// bases and [baseRef, suffix] endpoints so URLs are built mechanically, never hand-assembled.
import { MAX_READ_PATHS } from "../kernel/limits.js";
import type { AnyToolDefinition, ProjectScope } from "../kernel/tool/definition.js";
import { MAX_WAIT_MS } from "../mutation/journal/controls.js";
import { MAX_CHUNK_BYTES } from "../mutation/staging/staging.js";
import { STDERR_LIMITS, STDOUT_LIMITS } from "../mutation/terminal/terminal-output.js";
import { MAX_RAW_BYTES, MAX_REQUEST_TARGET_BYTES } from "../url-grammar/limits.js";

/**
 * Hard ceiling for the fully enabled contract on the local test origin (2 KiB). It was 1.6 KiB until issue 27
 * item 8 added six facts whose absence each cost a round trip or a mistake in the field test (docs/PROTOCOL.md).
 */
export const MAX_INIT_CONTRACT_BYTES = 2048;

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

/** Exported for the Init test and the docs: the tilde fact, worded to point at the declaration generically. */
export const TILDE_RULE =
  "Encoders leave ~ as is: if code percent-encodes, add enc=pct (~ literal); else ~~ is a literal ~.";

const kibCount = (bytes: number) => `${bytes / 1024}`;

function rules(mutation: boolean, terminal: boolean): string[] {
  const base = [
    "Fetch every URL in raw, unconverted mode.",
    "URL = bases[ref] + suffix; replace only <...>.",
    "raw= goes last: all after it is content. Escapes: ~n LF ~r CR ~t tab ~s space ~q + ~h # ~p % ~a & ~~ ~ ~uXXXX. + is space but adds a notice; ~s none.",
    TILDE_RULE,
    `Up to ${MAX_READ_PATHS} path= per /r, each with its own lines=a-b; max=<bytes> per page. /g: literal unless regex=1. Use next/repair/poll/retry/repeat URLs exactly as returned.`,
    "Truncated reply: /z?last=1&part=0 on the same base.",
  ];
  if (!mutation) return base;
  return [
    ...base,
    "Mutations run once: a repeated GET replays the first result; run=<nonce> runs again.",
    `wait=<ms> (≤${MAX_WAIT_MS}) on mutations and /j.${terminal ? " /x bg=1 starts a server, answers its URLs." : ""}`,
    ...(terminal
      ? [
          `/x runs as the project's user, own PATH; keeps ${kibCount(STDOUT_LIMITS.headBytes)}+${kib(STDOUT_LIMITS.tailBytes)} of stdout (head+tail), ${kibCount(STDERR_LIMITS.headBytes)}+${kib(STDERR_LIMITS.tailBytes)} of stderr: add 2>&1. Tests: wait=${MAX_WAIT_MS}&run=@changed reruns only after a change.`,
        ]
      : []),
    "/e: one edit. /w: after a full read. /a: one patch for more edits or files: *** Begin Patch; *** Add File: <p> +lines | *** Delete File: <p> | *** Update File: <p> [*** Move to: <q>] @@ [line] ' '/-/+ lines; *** End Patch.",
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
