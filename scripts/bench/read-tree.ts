// The generated trees the read benchmarks run on: source-like files from a seeded generator, so every run
// searches the same bytes.
import fs from "node:fs";
import path from "node:path";

export const GREP_NEEDLE = "BENCH_NEEDLE";
export const GREP_TREE_FILES = 5000;
const DIRS = 50;
const NEEDLE_EVERY = 80;

/** Mulberry32: a tiny deterministic PRNG. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  "value",
  "count",
  "index",
  "result",
  "buffer",
  "request",
  "handler",
  "config",
  "state",
  "item",
  "total",
  "offset",
];

function sourceLine(random: () => number, n: number): string {
  const word = () => WORDS[Math.floor(random() * WORDS.length)]!;
  switch (n % 4) {
    case 0:
      return `export function ${word()}${n}(${word()}: number): number {`;
    case 1:
      return `  const ${word()} = ${word()} * ${Math.floor(random() * 1000)}; // ${word()} ${word()}`;
    case 2:
      return `  return ${word()} + ${Math.floor(random() * 100)};`;
    default:
      return "}";
  }
}

/** Text of about `bytes` bytes of source-like lines. */
export function sourceText(seed: number, bytes: number): string {
  const random = seeded(seed);
  const lines: string[] = [];
  let size = 0;
  for (let n = 0; size < bytes; n++) {
    const line = sourceLine(random, n);
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join("\n")}\n`.slice(0, bytes - 1) + "\n";
}

/** 5,000 files of ~1.5 KiB in 50 folders, the needle on one line of every 80th file, plus a .gitignore. */
export function writeGrepTree(root: string): { files: number; needleFiles: number; bytes: number } {
  const random = seeded(42);
  let needleFiles = 0;
  let bytes = 0;
  fs.writeFileSync(path.join(root, ".gitignore"), "*.log\ndist/\n");
  for (let i = 0; i < GREP_TREE_FILES; i++) {
    const dir = path.join(root, "src", `module${String(i % DIRS).padStart(2, "0")}`);
    if (i < DIRS) fs.mkdirSync(dir, { recursive: true });
    let text = sourceText(i + 1, 1024 + Math.floor(random() * 1024));
    if (i % NEEDLE_EVERY === 0) {
      const lines = text.split("\n");
      lines.splice(Math.floor(lines.length / 2), 0, `  // ${GREP_NEEDLE} marks file ${i}`);
      text = lines.join("\n");
      needleFiles++;
    }
    fs.writeFileSync(path.join(dir, `file${String(i).padStart(4, "0")}.ts`), text);
    bytes += Buffer.byteLength(text);
  }
  return { files: GREP_TREE_FILES, needleFiles, bytes };
}
