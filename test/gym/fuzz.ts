// The grammar-aware fuzzer: deterministic strings (seeded by GYM_SEED) biased towards what breaks URL
// transports: ~ escapes valid and broken, percent sequences, + & = ?, surrogates, combining marks, controls.
import { pick, seededRandom } from "../helpers/seeded-random.js";
import { CORPUS } from "./corpus.js";

export const DEFAULT_GYM_SEED = 20261129;

/** GYM_SEED from the environment, else the default, so every run is reproducible from its report. */
export function gymSeed(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.GYM_SEED;
  if (raw === undefined || raw === "") return DEFAULT_GYM_SEED;
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`GYM_SEED must be an integer, got ${JSON.stringify(raw)}`);
  return seed;
}

const TILDE_ATOMS = [
  "~",
  "~~",
  "~~~",
  "~n",
  "~r",
  "~t",
  "~h",
  "~p",
  "~q",
  "~s",
  "~a",
  "~e9",
  "~N",
  "~u",
  "~u2082",
  "~u00e9",
  "~uD83D",
  "~uDE00",
  "~uD83D~uDE00",
  "~u{1F600}",
  "~u{",
  "~u{110000}",
  "~u{D800}",
  "~uZZZZ",
  "~u12",
];
const PERCENT_ATOMS = [
  "%",
  "%%",
  "%2",
  "%20",
  "%2520",
  "%25",
  "%252520",
  "%zz",
  "%C3",
  "%C3%A9",
  "%c3%a9",
  "%E2%82",
  "%F0%9F%98%80",
  "%FF",
  "%00",
  "%0A",
  "%7E",
  "%2B",
  "%26",
  "%3D",
  "%23",
  "100%",
  "%u00e9",
];
const QUERY_ATOMS = [
  "+",
  "++",
  " + ",
  "&",
  "&&",
  "=",
  "==",
  "?",
  "#",
  "/",
  ";",
  ",",
  "raw=",
  "&raw=",
  "&wait=1000",
  "&path=x",
  "&run=2",
  "a=b&c=d",
  "?x=1",
];
const ASCII_ATOMS = [
  " ",
  "  ",
  "\t",
  "\n",
  "\r\n",
  "\r",
  "\0",
  "\u0001",
  "\u001b",
  "\u007f",
  '"',
  "'",
  "`",
  "\\",
  "\\\\",
  "{",
  "}",
  "[",
  "]",
  "|",
  "^",
  "<",
  ">",
  "$",
  "!",
  "*",
  "(",
  ")",
  "@",
  ":",
];
const UNICODE_ATOMS = [
  "\u00e9",
  "e\u0301",
  "\u0301",
  "\u0300\u0301\u0302",
  "\u2082",
  "\u4e2d",
  "\ud83d\ude00",
  "\ud83d\udc68\u200d\ud83d\udc69",
  "\ud83c\uddfa\ud83c\uddf3",
  "\ufeff",
  "\u200b",
  "\u200d",
  "\u202e",
  "\u2028",
  "\u00a0",
  "\ufffd",
  "\uffff",
  "\u{10ffff}",
  "\u00c3\u00a9",
];
const LONE_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff"];
const WORDS = ["a", "x", "foo", "path", "wait", "raw", "C:", "src", "0", "1000", "EOF", "echo", "const", "%d"];

type Generator = (rand: () => number) => string;

const randomCodePoint: Generator = (rand) => {
  const r = rand();
  if (r < 0.5) return String.fromCodePoint(0x20 + Math.floor(rand() * 0x5f));
  if (r < 0.8) {
    const cp = 0xa0 + Math.floor(rand() * (0xd800 - 0xa0));
    return String.fromCodePoint(cp);
  }
  if (r < 0.9) return String.fromCodePoint(0xe000 + Math.floor(rand() * 0x2000));
  return String.fromCodePoint(0x10000 + Math.floor(rand() * 0xfffff));
};

const corpusSlice: Generator = (rand) => {
  const text = pick(rand, CORPUS).text;
  const start = Math.floor(rand() * (text.length + 1));
  return text.slice(start, start + 1 + Math.floor(rand() * 24));
};

// Weights: most mass on the URL grammar, because that is where transports disagree.
const GENERATORS: Array<[number, Generator]> = [
  [18, (r) => pick(r, TILDE_ATOMS)],
  [16, (r) => pick(r, PERCENT_ATOMS)],
  [14, (r) => pick(r, QUERY_ATOMS)],
  [14, (r) => pick(r, ASCII_ATOMS)],
  [12, (r) => pick(r, UNICODE_ATOMS)],
  [1, (r) => pick(r, LONE_SURROGATES)],
  [10, (r) => pick(r, WORDS)],
  [8, randomCodePoint],
  [7, corpusSlice],
];
const TOTAL_WEIGHT = GENERATORS.reduce((sum, [w]) => sum + w, 0);

function atom(rand: () => number): string {
  let x = rand() * TOTAL_WEIGHT;
  for (const [weight, generate] of GENERATORS) {
    x -= weight;
    if (x < 0) return generate(rand);
  }
  return GENERATORS[0]![1](rand);
}

export interface Fuzzer {
  seed: number;
  /** Next fuzz string; at most maxAtoms grammar atoms. */
  next(maxAtoms?: number): string;
}

export function createFuzzer(seed: number): Fuzzer {
  const rand = seededRandom(seed);
  return {
    seed,
    next(maxAtoms = 16) {
      const n = 1 + Math.floor(rand() * maxAtoms);
      let s = "";
      for (let i = 0; i < n; i++) s += atom(rand);
      return s;
    },
  };
}

/** A seeded PRNG for the gym's other choices (which form, which reader), separate from the fuzz stream. */
export function gymRandom(seed: number, stream: number): () => number {
  return seededRandom((seed ^ Math.imul(stream + 1, 0x9e3779b1)) >>> 0);
}
