// The scripted agent of the real-client suite: what the stand-in model (stand-in-model.ts) asks each real client to
// call, decided from what the client handed back so far, exactly as a model would decide from its context. Pure: the
// same history gives the same next call, so a client that repeats a request (a retry) gets the same answer.
//
// The scenario (issue 26, "Must show"): read a 500-line file page by page, following only the continuation the
// answer offers; an edit whose oldString has drifted indentation; a patch; a `shell` that runs 30 s, plus the one
// follow-up call a `running` answer names; then a read of 3 lines of a 200-line file, a failing edit, and a write
// of that file, which must answer stale_read (the model never saw the whole file).

/** The project's files before the scenario, by path. */
export const BIG_FILE = "big.txt";
export const BIG_LINES = 500;
/** Line n of big.txt: a unique, greppable row of ~90 bytes, so a 500-line page is ~45 KB (over Codex's inline budget). */
export const bigLine = (n: number) => `row-${n} ${"abcdefghij".repeat(8)} end-${n}`;

export const GREET_FILE = "src/greet.py";
export const GREET_BEFORE = [
  "def greet(name):",
  "    if name:",
  '        return "hello " + name',
  '    return "nobody"',
  "",
].join("\n");
/** The model copied the block with two-space indentation instead of four: the edit must still apply, once. */
export const DRIFTED_OLD = ["  if name:", '      return "hello " + name'].join("\n");
export const DRIFTED_NEW = ["  if name:", '      return "hi " + name'].join("\n");
export const GREET_AFTER = [
  "def greet(name):",
  "    if name:",
  '        return "hi " + name',
  '    return "nobody"',
  "",
].join("\n");

export const NOTES_FILE = "notes.md";
export const NOTES_BEFORE = "# Notes\n\nstatus: draft\nowner: nobody\n";
export const NOTES_AFTER = "# Notes\n\nstatus: final\nowner: nobody\n";
export const PATCH_TEXT = [
  "*** Begin Patch",
  `*** Update File: ${NOTES_FILE}`,
  "@@",
  " ",
  "-status: draft",
  "+status: final",
  " owner: nobody",
  "*** End Patch",
].join("\n");

export const SHELL_COMMAND = "sleep 30; echo done-30";
export const SHELL_STDOUT = "done-30";

export const CONFIG_FILE = "config.yaml";
export const CONFIG_LINES = 200;
export const CONFIG_BEFORE =
  Array.from({ length: CONFIG_LINES }, (_, i) => `key${i + 1}: value${i + 1}`).join("\n") + "\n";
export const CONFIG_SHOWN_LINES = 3;
export const MISSING_OLD = "key9999: not-in-this-file";
export const WRITE_CONTENT = "replaced: true\n";

export function projectFiles(): Record<string, string> {
  return {
    [BIG_FILE]: Array.from({ length: BIG_LINES }, (_, i) => bigLine(i + 1)).join("\n") + "\n",
    [GREET_FILE]: GREET_BEFORE,
    [NOTES_FILE]: NOTES_BEFORE,
    [CONFIG_FILE]: CONFIG_BEFORE,
  };
}

export type Step =
  "read" | "edit-drifted" | "patch" | "shell" | "shell-follow-up" | "read-partial" | "edit-failing" | "write";

/** One call the stand-in asked for: the urlbridge tool (without the client's prefix) and its arguments. */
export interface ToolCall {
  step: Step;
  tool: string;
  args: Record<string, unknown>;
}

/** A call with the text the model was handed for it, as the client sent it back (serialised as the client does). */
export interface Exchange {
  tool: string;
  args: Record<string, unknown>;
  /** The raw tool result as it reached the model. */
  raw: string;
}

/** Scripted turns a model gives up after: the scenario's own calls are far fewer. */
const MAX_READ_PAGES = 12;

/**
 * What a model reads in a tool result: the raw text, and every string inside any JSON value found in it (Claude
 * Code and Codex hand over structuredContent as JSON; Gemini wraps the text in a JSON response), with their escapes
 * undone, so numbered lines and diffs inside JSON strings read as lines.
 */
export function seenText(raw: string): string {
  const strings: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === "string") {
      strings.push(value);
      // A string may itself hold JSON (an MCP text block carrying a JSON rendering).
      const inner = value.trimStart();
      if (inner.startsWith("{") || inner.startsWith("[")) walk(parseLoose(inner));
    } else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk(parseLoose(raw));
  // Codex prefixes "Wall time: ... Output:" before the JSON: parse from the first brace too.
  const brace = raw.indexOf("{");
  if (brace > 0) walk(parseLoose(raw.slice(brace)));
  return [raw, ...strings].join("\n");
}

function parseLoose(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Lines of big.txt the model saw with their number beside them: n -> seen. */
export function numberedBigLines(seen: string): Set<number> {
  const found = new Set<number>();
  // "  12\trow-12 ...", "12: row-12 ...", {"line":12,"text":"row-12 ..."}: the number, a few separators, the whole row.
  const pattern = /(?<![\d.])(\d{1,4})(?:[^\d\n]{1,16}?)(row-(\d{1,4}) [a-j]{80} end-(\d{1,4}))/g;
  for (const m of seen.matchAll(pattern)) {
    const n = Number(m[1]);
    if (n === Number(m[3]) && n === Number(m[4]) && m[2] === bigLine(n)) found.add(n);
  }
  return found;
}

/**
 * The continuation a read answer offers as a tool call: `{tool:"read", arguments:{...}}` (structuredContent), or in
 * the text's words, "call read with {...}" or "call read with offset=N".
 */
export function readContinuation(seen: string): Record<string, unknown> | undefined {
  for (const m of seen.matchAll(/\{"tool":"read","arguments":(\{[^{}]*\})\}/g)) {
    const args = parseLoose(m[1]!) as Record<string, unknown> | undefined;
    if (args && typeof args.offset === "number") return args;
  }
  // The text rendering names the same call in words: "call read with {"path":...,"offset":N}".
  for (const m of seen.matchAll(/call read with (\{[^{}]*\})/g)) {
    const args = parseLoose(m[1]!) as Record<string, unknown> | undefined;
    if (args && typeof args.offset === "number") return args;
  }
  const m = /call read with offset=(\d+)/.exec(seen);
  return m ? { path: BIG_FILE, offset: Number(m[1]) } : undefined;
}

/** The one follow-up a `running` shell answer names, as a tool call `{tool, arguments}`. */
export function followUpCall(seen: string): { tool: string; args: Record<string, unknown> } | undefined {
  for (const m of seen.matchAll(/\{"tool":"([a-z_]+)","arguments":(\{[^{}]*\})\}/g)) {
    const args = parseLoose(m[2]!) as Record<string, unknown> | undefined;
    if (args) return { tool: m[1]!, args };
  }
  return undefined;
}

/** The next call given the exchanges so far, or undefined when the scenario is over. */
export function nextCall(history: readonly Exchange[]): ToolCall | undefined {
  let i = 0;
  // 1. Read big.txt: the first page, then each continuation the answer offers, until none is offered.
  if (history.length === 0) return { step: "read", tool: "read", args: { path: BIG_FILE } };
  while (i < history.length && history[i]!.tool === "read" && history[i]!.args.path === BIG_FILE) i++;
  if (i === history.length) {
    const more = readContinuation(seenText(history[i - 1]!.raw));
    if (more && i < MAX_READ_PAGES) return { step: "read", tool: "read", args: { ...more, path: BIG_FILE } };
    return {
      step: "edit-drifted",
      tool: "edit",
      args: { path: GREET_FILE, oldString: DRIFTED_OLD, newString: DRIFTED_NEW },
    };
  }
  const rest = history.slice(i);
  const script: ToolCall[] = [
    { step: "edit-drifted", tool: "edit", args: { path: GREET_FILE, oldString: DRIFTED_OLD, newString: DRIFTED_NEW } },
    { step: "patch", tool: "patch", args: { patchText: PATCH_TEXT } },
    { step: "shell", tool: "shell", args: { command: SHELL_COMMAND } },
  ];
  for (let k = 0; k < script.length; k++) if (rest.length === k) return script[k];
  let j = script.length;
  // 4b. The shell answer did not carry stdout: the one follow-up call it names, if it names one.
  const shellSeen = seenText(rest[j - 1]!.raw);
  const followUp = shellSeen.includes(SHELL_STDOUT) ? undefined : followUpCall(shellSeen);
  if (followUp) {
    if (rest.length === j) return { step: "shell-follow-up", ...followUp };
    j++;
  }
  const tail: ToolCall[] = [
    { step: "read-partial", tool: "read", args: { path: CONFIG_FILE, limit: CONFIG_SHOWN_LINES } },
    {
      step: "edit-failing",
      tool: "edit",
      args: { path: CONFIG_FILE, oldString: MISSING_OLD, newString: "key9999: x" },
    },
    { step: "write", tool: "write", args: { path: CONFIG_FILE, content: WRITE_CONTENT } },
  ];
  for (let k = 0; k < tail.length; k++) if (rest.length === j + k) return tail[k];
  return undefined;
}

/** Which step each exchange of a finished history was. */
export function stepsOf(history: readonly Exchange[]): Array<Exchange & { step: Step }> {
  return history.map((exchange, n) => ({ ...exchange, step: nextCall(history.slice(0, n))?.step ?? "write" }));
}
