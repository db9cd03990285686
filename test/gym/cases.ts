// End-to-end case kinds: how one text travels through one route and how the result is checked, byte for
// byte, on disk or in the answer. A kind states which texts it can carry (a file name has no "/").
import fs from "node:fs";
import path from "node:path";
import type { AgentAnswer, GymAgent } from "./agent.js";
import { expectedBytes } from "./corpus.js";
import type { Form } from "./forms.js";
import { giveToAgent, writeAsAgent, mkdirAsAgent } from "../helpers/bridge.js";

export type KindName =
  | "stat-name"
  | "read-content"
  | "read-paged"
  | "grep-needle"
  | "find-name"
  | "write-raw"
  | "write-name"
  | "write-staged"
  | "edit-text"
  | "patch-add"
  | "terminal-echo";

export interface CaseContext {
  /** Unique per case: it keeps paths, commands and so call ids apart. */
  id: string;
  form: Form;
  agent: GymAgent;
  bases: { r: string; m: string };
  projectDir: string;
  /** Make a terminal command run long enough (ms) for a hidden retry to arrive while it runs. */
  dwellMs: number;
}

export type Outcome = "exact" | "refused" | "wrong";

export interface Verdict {
  outcome: Outcome;
  detail?: string;
  /** The mutation's journal call id, when the route has one. */
  callId?: string;
  /** Executions observed through a side effect the command leaves (terminal), when the kind has one. */
  executions?: number;
  fetches: number;
  recoveredByRange: boolean;
}

export interface CaseKind {
  name: KindName;
  /** The compact routes the kind needs. */
  routes: string[];
  mutation: boolean;
  carries(text: string): boolean;
  /** The strings the kind puts into the URL for `text` (values and raw tail), for checking a form can carry them. */
  wireTexts(text: string): string[];
  run(text: string, ctx: CaseContext): Promise<Verdict>;
}

const GYM_DIR = "gym";
const MAX_NAME_BYTES = 200;
const MAX_LINE_CHARS = 400;
/** Larger than one /r answer (64 KiB by default), so the read comes back in pages linked by next. */
const PAGED_FILE_BYTES = 70 * 1024;
const MAX_PAGES = 20;
const STAGED_CHUNKS = 3;

const sameBytes = (actual: string | Buffer, text: string) =>
  (Buffer.isBuffer(actual) ? actual : expectedBytes(actual)).equals(expectedBytes(text));
const show = (value: unknown) => JSON.stringify(value)?.slice(0, 240);
const noNul = (t: string) => !t.includes("\0");
const singleLine = (t: string) => t.length > 0 && t.length <= MAX_LINE_CHARS && !/[\n\r\0]/.test(t);

function occurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) n++;
  return n;
}

function ensureDir(dir: string): void {
  mkdirAsAgent(dir, { recursive: true });
}

function fileBytes(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

/** C0 controls and DEL, which the bridge refuses in names it creates. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

function refusedOrWrong(answer: AgentAnswer, leftNoTrace: boolean): Verdict {
  const body = answer.body;
  const base = {
    fetches: answer.fetches,
    recoveredByRange: answer.recoveredByRange,
    callId: typeof body.callId === "string" ? body.callId : undefined,
  };
  if (body.ok === false && typeof body.errorCode === "string") {
    return leftNoTrace
      ? { ...base, outcome: "refused", detail: `${body.errorCode}: ${String(body.repairHint ?? "").slice(0, 160)}` }
      : { ...base, outcome: "wrong", detail: `refused with ${body.errorCode} but left a trace` };
  }
  return { ...base, outcome: "wrong", detail: `unexpected answer ${show(body)}` };
}

function judge(answer: AgentAnswer, exact: boolean, detail: () => string, extra: Partial<Verdict> = {}): Verdict {
  const callId = typeof answer.body.callId === "string" ? answer.body.callId : undefined;
  return {
    outcome: exact ? "exact" : "wrong",
    ...(exact ? {} : { detail: detail() }),
    callId,
    fetches: answer.fetches,
    recoveredByRange: answer.recoveredByRange,
    ...extra,
  };
}

const url = (base: string, route: string, params: string[], tail?: string) =>
  `${base}/${route}?${[...params, ...(tail === undefined ? [] : [`raw=${tail}`])].join("&")}`;
/** A case's URL: the form's own parameters (a declaration such as enc=pct) first, then the kind's. */
const urlFor = (ctx: CaseContext, base: string, route: string, params: string[], tail?: string) =>
  url(base, route, [...(ctx.form.params ?? []), ...params], tail);

const statName: CaseKind = {
  name: "stat-name",
  routes: ["t"],
  mutation: false,
  carries: (t) =>
    t.length > 0 &&
    noNul(t) &&
    !t.includes("/") &&
    t !== "." &&
    t !== ".." &&
    expectedBytes(t).length <= MAX_NAME_BYTES,
  wireTexts: (t) => [`${GYM_DIR}/c0/${t}`],
  async run(text, ctx) {
    const rel = `${GYM_DIR}/${ctx.id}/${text}`;
    ensureDir(path.join(ctx.projectDir, GYM_DIR, ctx.id));
    writeAsAgent(path.join(ctx.projectDir, rel), "x");
    const answer = await ctx.agent.call(urlFor(ctx, ctx.bases.r, "t", [`path=${ctx.form.value(rel)}`]));
    const { body } = answer;
    if (body.ok !== true) return refusedOrWrong(answer, true);
    return judge(
      answer,
      body.exists === true && sameBytes(String(body.path), `/project/${rel}`),
      () => `stat answered ${show(body)}`,
    );
  },
};

const findName: CaseKind = {
  name: "find-name",
  routes: ["f"],
  mutation: false,
  carries: statName.carries,
  wireTexts: (t) => [`${GYM_DIR}/c0`, t],
  async run(text, ctx) {
    const dir = `${GYM_DIR}/${ctx.id}`;
    ensureDir(path.join(ctx.projectDir, dir));
    writeAsAgent(path.join(ctx.projectDir, dir, text), "x");
    const answer = await ctx.agent.call(
      urlFor(ctx, ctx.bases.r, "f", [`path=${ctx.form.value(dir)}`, `name=${ctx.form.value(text)}`]),
    );
    const hits = answer.body.results;
    if (answer.body.ok !== true || !Array.isArray(hits)) return refusedOrWrong(answer, true);
    const paths = (hits as Array<{ path: string }>).map((h) => h.path);
    return judge(
      answer,
      paths.length === 1 && sameBytes(paths[0]!, `/project/${dir}/${text}`),
      () => `find answered ${show(paths)}`,
    );
  },
};

const readContent: CaseKind = {
  name: "read-content",
  routes: ["r"],
  mutation: false,
  // A leading BOM is reported as the file's encoding, not content; NUL makes a file binary.
  carries: (t) => noNul(t) && !t.startsWith("\ufeff"),
  wireTexts: () => [`${GYM_DIR}/c0.txt`],
  async run(text, ctx) {
    const rel = `${GYM_DIR}/${ctx.id}.txt`;
    ensureDir(path.join(ctx.projectDir, GYM_DIR));
    writeAsAgent(path.join(ctx.projectDir, rel), expectedBytes(text));
    const answer = await ctx.agent.call(urlFor(ctx, ctx.bases.r, "r", [`path=${ctx.form.value(rel)}`]));
    const file = (answer.body.files as Array<{ content?: string }> | undefined)?.[0];
    if (answer.body.ok !== true || !file) return refusedOrWrong(answer, true);
    return judge(answer, sameBytes(file.content ?? "", text), () => `read content ${show(file.content)}`);
  },
};

const readPaged: CaseKind = {
  name: "read-paged",
  routes: ["r"],
  mutation: false,
  carries: (t) => t.length > 0 && readContent.carries(t),
  wireTexts: (t) => [`${GYM_DIR}/c0/${statName.carries(t) ? t : "paged.txt"}`],
  async run(text, ctx) {
    // A nasty file name puts the server's own encoder to work: every next URL carries the path.
    const rel = `${GYM_DIR}/${ctx.id}/${statName.carries(text) ? text : "paged.txt"}`;
    let content = "";
    while (expectedBytes(content).length < PAGED_FILE_BYTES) content += `${text}\n`;
    ensureDir(path.join(ctx.projectDir, GYM_DIR, ctx.id));
    writeAsAgent(path.join(ctx.projectDir, rel), expectedBytes(content));
    let next: string | undefined = urlFor(ctx, ctx.bases.r, "r", [`path=${ctx.form.value(rel)}`]);
    let joined = "";
    let fetches = 0;
    let recovered = false;
    for (let page = 0; next && page < MAX_PAGES; page++) {
      const answer = await ctx.agent.call(next);
      fetches += answer.fetches;
      recovered ||= answer.recoveredByRange;
      const file = (answer.body.files as Array<{ content?: string }> | undefined)?.[0];
      if (answer.body.ok !== true || !file) return { ...refusedOrWrong(answer, true), fetches };
      joined += file.content ?? "";
      next = answer.body.allComplete === true ? undefined : (answer.body.next as string | undefined);
    }
    const exact = next === undefined && sameBytes(joined, content);
    return {
      outcome: exact ? "exact" : "wrong",
      ...(exact ? {} : { detail: `pages joined to ${joined.length} chars, file has ${content.length}` }),
      fetches,
      recoveredByRange: recovered,
    };
  },
};

const grepNeedle: CaseKind = {
  name: "grep-needle",
  routes: ["g"],
  mutation: false,
  carries: singleLine,
  wireTexts: (t) => [t],
  async run(text, ctx) {
    const rel = `${GYM_DIR}/${ctx.id}.txt`;
    const line = `<${ctx.id}>${text}</${ctx.id}>`;
    ensureDir(path.join(ctx.projectDir, GYM_DIR));
    writeAsAgent(path.join(ctx.projectDir, rel), expectedBytes(`before\n${line}\nafter\n`));
    const answer = await ctx.agent.call(
      urlFor(ctx, ctx.bases.r, "g", [`path=${ctx.form.value(rel)}`], ctx.form.tail(text)),
    );
    const files = answer.body.files as Array<{ lines: Array<{ line: number; text: string }> }> | undefined;
    if (answer.body.ok !== true || !files) return refusedOrWrong(answer, true);
    const hit = files[0]?.lines.find((l) => l.line === 2);
    return judge(
      answer,
      files.length === 1 && hit !== undefined && sameBytes(hit.text, line),
      () => `grep answered ${show(answer.body.files)}`,
    );
  },
};

const writeRaw: CaseKind = {
  name: "write-raw",
  routes: ["w"],
  mutation: true,
  carries: () => true,
  wireTexts: (t) => [t],
  async run(text, ctx) {
    const rel = `${GYM_DIR}/${ctx.id}.txt`;
    const answer = await ctx.agent.call(
      urlFor(ctx, ctx.bases.m, "w", [`path=${ctx.form.value(rel)}`], ctx.form.tail(text)),
    );
    const disk = fileBytes(path.join(ctx.projectDir, rel));
    if (answer.body.ok !== true) return refusedOrWrong(answer, disk === undefined);
    return judge(
      answer,
      disk !== undefined && sameBytes(disk, text),
      () => `disk holds ${show(disk?.toString("utf8"))}`,
    );
  },
};

const writeName: CaseKind = {
  name: "write-name",
  routes: ["w"],
  mutation: true,
  carries: statName.carries,
  wireTexts: statName.wireTexts,
  async run(text, ctx) {
    const rel = `${GYM_DIR}/${ctx.id}/${text}`;
    const answer = await ctx.agent.call(
      urlFor(ctx, ctx.bases.m, "w", [`path=${ctx.form.value(rel)}`], ctx.form.tail(ctx.id)),
    );
    const disk = fileBytes(path.join(ctx.projectDir, rel));
    const listing = fs.existsSync(path.join(ctx.projectDir, GYM_DIR, ctx.id))
      ? fs.readdirSync(path.join(ctx.projectDir, GYM_DIR, ctx.id))
      : [];
    // The bridge never creates a name with a control character (docs/RELIABILITY.md, input hygiene): for such a
    // name the meant outcome is exactly that refusal, with nothing created.
    if (CONTROL_CHARACTER.test(text)) {
      return judge(
        answer,
        answer.body.ok === false && answer.body.errorCode === "invalid_path" && listing.length === 0,
        () => `answer ${show(answer.body)}, directory holds ${show(listing)}`,
      );
    }
    if (answer.body.ok !== true) return refusedOrWrong(answer, listing.length === 0);
    return judge(
      answer,
      disk !== undefined && sameBytes(disk, ctx.id) && listing.length === 1,
      () => `directory holds ${show(listing)}`,
    );
  },
};

/** Splits on code points so no chunk ends inside a surrogate pair. */
function chunksOf(text: string, count: number): string[] {
  const points = Array.from(text);
  const size = Math.ceil(points.length / count);
  return Array.from({ length: count }, (_, i) => points.slice(i * size, (i + 1) * size).join("")).filter(
    (c) => c.length > 0,
  );
}

const writeStaged: CaseKind = {
  name: "write-staged",
  routes: ["s", "w"],
  mutation: true,
  carries: (t) => Array.from(t).length >= STAGED_CHUNKS,
  wireTexts: (t) => [t, ...chunksOf(t, STAGED_CHUNKS)],
  async run(text, ctx) {
    const rel = `${GYM_DIR}/${ctx.id}.txt`;
    const blob = ctx.id;
    const chunks = chunksOf(text, STAGED_CHUNKS);
    let fetches = 0;
    for (const [i, chunk] of chunks.entries()) {
      const ack = await ctx.agent.call(
        urlFor(ctx, ctx.bases.m, "s", [`blob=${blob}`, `i=${i}`, `count=${chunks.length}`], ctx.form.tail(chunk)),
      );
      fetches += ack.fetches;
      if (ack.body.ok !== true)
        return { ...refusedOrWrong(ack, !fs.existsSync(path.join(ctx.projectDir, rel))), fetches };
    }
    const answer = await ctx.agent.call(
      urlFor(ctx, ctx.bases.m, "w", [`path=${ctx.form.value(rel)}`, `blob=${blob}`, `count=${chunks.length}`]),
    );
    const disk = fileBytes(path.join(ctx.projectDir, rel));
    if (answer.body.ok !== true)
      return { ...refusedOrWrong(answer, disk === undefined), fetches: fetches + answer.fetches };
    return {
      ...judge(answer, disk !== undefined && sameBytes(disk, text), () => `disk holds ${show(disk?.toString("utf8"))}`),
      fetches: fetches + answer.fetches,
    };
  },
};

// Markers independent of the case id, so whether old= is unique in the file depends on the text alone.
const EDIT_PREFIX = "\u0001BEGIN\u0001";
const EDIT_SUFFIX = "\u0001END\u0001\n";

const editText: CaseKind = {
  name: "edit-text",
  routes: ["e"],
  mutation: true,
  // Matching treats any newline as \n and the file keeps its own style: CR-free text keeps the check byte-exact.
  carries: (t) => t.length > 0 && !/[\r\0]/.test(t) && occurrences(`${EDIT_PREFIX}${t}${EDIT_SUFFIX}`, t) === 1,
  wireTexts: (t) => [t, `<${t}>`],
  async run(text, ctx) {
    const rel = `${GYM_DIR}/${ctx.id}.txt`;
    const file = path.join(ctx.projectDir, rel);
    const before = `${EDIT_PREFIX}${text}${EDIT_SUFFIX}`;
    const replacement = `<${text}>`;
    ensureDir(path.dirname(file));
    writeAsAgent(file, expectedBytes(before));
    const answer = await ctx.agent.call(
      urlFor(
        ctx,
        ctx.bases.m,
        "e",
        [`path=${ctx.form.value(rel)}`, `old=${ctx.form.value(text)}`],
        ctx.form.tail(replacement),
      ),
    );
    const disk = fileBytes(file)!;
    if (answer.body.ok !== true) return refusedOrWrong(answer, sameBytes(disk, before));
    const after = `${EDIT_PREFIX}${replacement}${EDIT_SUFFIX}`;
    return judge(answer, sameBytes(disk, after), () => `disk holds ${show(disk.toString("utf8"))}`);
  },
};

function addFilePatch(rel: string, text: string): string {
  return ["*** Begin Patch", `*** Add File: ${rel}`, ...text.split("\n").map((l) => `+${l}`), "*** End Patch", ""].join(
    "\n",
  );
}

const patchAdd: CaseKind = {
  name: "patch-add",
  routes: ["a"],
  mutation: true,
  carries: (t) => !/[\r\0]/.test(t),
  wireTexts: (t) => [addFilePatch(`${GYM_DIR}/c0.txt`, t)],
  async run(text, ctx) {
    const rel = `${GYM_DIR}/${ctx.id}.txt`;
    const lines = text.split("\n");
    const patch = addFilePatch(rel, text);
    const answer = await ctx.agent.call(urlFor(ctx, ctx.bases.m, "a", [], ctx.form.tail(patch)));
    const disk = fileBytes(path.join(ctx.projectDir, rel));
    if (answer.body.ok !== true) return refusedOrWrong(answer, disk === undefined);
    return judge(
      answer,
      disk !== undefined && sameBytes(disk, `${lines.join("\n")}\n`),
      () => `disk holds ${show(disk?.toString("utf8"))}`,
    );
  },
};

const shellQuote = (t: string) => `'${t.replace(/'/g, `'\\''`)}'`;

/** The appended line is the execution counter: one line per time the shell really ran the command. */
function echoCommand(counter: string, text: string, dwellMs: number): string {
  const dwell = dwellMs > 0 ? `sleep ${(dwellMs / 1000).toFixed(2)}; ` : "";
  return `${dwell}echo run >> ${counter}; printf '%s' ${shellQuote(text)}`;
}

const terminalEcho: CaseKind = {
  name: "terminal-echo",
  routes: ["x"],
  mutation: true,
  carries: noNul,
  wireTexts: (t) => [echoCommand(`${GYM_DIR}/exec/c0`, t, 1)],
  async run(text, ctx) {
    const counter = `${GYM_DIR}/exec/${ctx.id}`;
    ensureDir(path.join(ctx.projectDir, GYM_DIR, "exec"));
    // As root the sandboxed shell runs as the project's owner (uid 1000): the counter folder must be its.
    for (const dir of [GYM_DIR, `${GYM_DIR}/exec`]) giveToAgent(path.join(ctx.projectDir, dir), false);
    const command = echoCommand(counter, text, ctx.dwellMs);
    const answer = await ctx.agent.call(urlFor(ctx, ctx.bases.m, "x", ["wait=1500"], ctx.form.tail(command)));
    const runs = (fileBytes(path.join(ctx.projectDir, counter))?.toString("utf8").match(/run\n/g) ?? []).length;
    if (answer.body.ok !== true) return { ...refusedOrWrong(answer, runs === 0), executions: runs };
    const stdout = String(answer.body.stdout ?? "");
    return judge(
      answer,
      answer.body.exitCode === 0 && sameBytes(stdout, text),
      () => `stdout ${show(stdout)} stderr ${show(answer.body.stderr)}`,
      {
        executions: runs,
      },
    );
  },
};

export const CASE_KINDS: readonly CaseKind[] = [
  statName,
  findName,
  readContent,
  readPaged,
  grepNeedle,
  writeRaw,
  writeName,
  writeStaged,
  editText,
  patchAdd,
  terminalEcho,
];
