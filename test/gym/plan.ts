// Deterministic case planning from GYM_SEED: which text travels through which route, written in which
// form, read by which reader, through which intermediary. The corpus goes first, then fuzz strings.
import { CORPUS, expectedBytes } from "./corpus.js";
import { form as namedForm, FORMS } from "./forms.js";
import { createFuzzer, gymRandom } from "./fuzz.js";
import type { CaseKind } from "./cases.js";
import { carriesThrough, type CaseSpec } from "./harness.js";
import { READERS_FOR_FORM, TIMEOUT_CAPABLE_READERS, type Intermediary } from "./matrix.js";
import type { ReaderName } from "./readers.js";

export interface PlanOptions {
  seed: number;
  cases: number;
  kinds: readonly CaseKind[];
  intermediaries: readonly Intermediary[];
  readers: readonly ReaderName[];
}

// Chromium and curl cost a page load or a process per case: fewer of them, but always some.
const READER_WEIGHTS: Record<ReaderName, number> = { fetch: 10, "node-bytes": 10, curl: 3, chromium: 1 };
const LARGE_ANSWER_KINDS = new Set(["read-content", "read-paged", "terminal-echo"]);
const LARGE_ANSWER_BYTES = 3500;
const LARGE_WIRE_LIMIT = 9000;
const LARGE_FILE_BYTES = 6000;

function weightedPick<T>(rand: () => number, items: readonly T[], weight: (item: T) => number): T | undefined {
  const total = items.reduce((sum, item) => sum + weight(item), 0);
  let x = rand() * total;
  for (const item of items) {
    x -= weight(item);
    if (x < 0) return item;
  }
  return items[items.length - 1];
}

/** Repeats text so the answer outgrows a truncating reader, keeping the URL within limits. */
function amplify(spec: CaseSpec): string {
  // read-paged builds its own 30 KiB file; its text is also the file name.
  if (!LARGE_ANSWER_KINDS.has(spec.kind.name) || spec.kind.name === "read-paged" || spec.text.length === 0)
    return spec.text;
  let text = spec.text;
  if (spec.kind.name === "read-content") {
    while (expectedBytes(text).length < LARGE_FILE_BYTES) text += spec.text;
    return text;
  }
  // WHATWG readers re-encode some characters the form leaves alone (' becomes %27): measure the longer wire.
  const typedLength = (w: string) => {
    const typed = `/x?raw=${spec.form.tail(w)}`;
    return Math.max(
      spec.form.toWire("http://gym.invalid", typed).length,
      namedForm("agent-whatwg").toWire("http://gym.invalid", typed).length,
    );
  };
  const wireLength = (t: string) => spec.kind.wireTexts(t).reduce((n, w) => n + typedLength(w), 0);
  while (expectedBytes(text).length < LARGE_ANSWER_BYTES && wireLength(text + spec.text) < LARGE_WIRE_LIMIT)
    text += spec.text;
  return text;
}

export function planCases(options: PlanOptions): CaseSpec[] {
  const fuzzer = createFuzzer(options.seed);
  const rand = gymRandom(options.seed, 1);
  const specs: CaseSpec[] = [];
  // A text no kind, form or reader can carry is skipped; the cap only guards against a plan that never fills.
  for (let i = 0; specs.length < options.cases && i < options.cases * 4; i++) {
    const fromCorpus = i < CORPUS.length * 2;
    const entry = CORPUS[i % CORPUS.length]!;
    const text = fromCorpus ? entry.text : fuzzer.next();
    const source = fromCorpus ? entry.name : `fuzz:${options.seed}:${i}`;
    const via = options.intermediaries[i % options.intermediaries.length]!;
    const kinds = options.kinds.filter(
      (k) =>
        k.carries(text) &&
        (!via.wantsLargeAnswers ||
          LARGE_ANSWER_KINDS.has(k.name) ||
          !options.kinds.some((x) => LARGE_ANSWER_KINDS.has(x.name))),
    );
    const kind = kinds[Math.floor(rand() * kinds.length)];
    const forms = kind ? FORMS.filter((f) => carriesThrough(f, via, kind, text)) : [];
    const form = forms[Math.floor(rand() * forms.length)];
    if (!kind || !form) continue;
    const readers = READERS_FOR_FORM[form.name].filter(
      (r) => options.readers.includes(r) && (via.clientTimeoutMs === undefined || TIMEOUT_CAPABLE_READERS.includes(r)),
    );
    const reader = weightedPick(rand, readers, (r) => READER_WEIGHTS[r]);
    if (!reader) continue;
    const spec: CaseSpec = { id: `c${i}`, kind, text, source, form, reader, intermediary: via };
    const large = via.wantsLargeAnswers ? amplify(spec) : text;
    // Repetition can join two harmless halves into an escape a form cannot carry: then keep the original.
    specs.push(kind.carries(large) && carriesThrough(form, via, kind, large) ? { ...spec, text: large } : spec);
  }
  return specs;
}
