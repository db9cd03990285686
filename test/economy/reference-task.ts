// The reference task of issue 14, scripted as a URL-only agent plays it: a Python project with a two-file bug
// (a mean off by one, a percentage formatted with %d%%), read both files, fix both, run the tests, read the
// result. Each variant is one way a real agent's URLs reach the bridge: typed raw through a WHATWG reader,
// encodeURIComponent, form encoding (+ for spaces), and a reader that percent-encodes the whole target again,
// each sent by a real URL reader (Node's fetch).
// Every GET after Init is counted with the bytes it transferred; test/economy/reference-task.test.ts holds the
// bounds and `npm run bench economy` prints the table.
import fs from "node:fs";
import path from "node:path";
import { form, type FormName } from "../gym/forms.js";
import { queryRewrite, rewriteTarget } from "../gym/intermediaries.js";

export const TASK_GET_BOUND = 3;
export const TASK_BYTES_BOUND = 12 * 1024;

const STATS_PY = `"""Small statistics helpers."""


def mean(xs):
    """The arithmetic mean of a non-empty list."""
    if not xs:
        raise ValueError("mean of an empty list")
    return sum(xs) / (len(xs) + 1)


def spread(xs):
    return max(xs) - min(xs)
`;

const FMT_PY = `"""Formatting helpers."""


def pct(ratio):
    """A ratio in 0..1 as a whole percentage, e.g. 0.25 -> "25%"."""
    return "%d%%" % (ratio * 10)


def pair(a, b):
    return "%s=%s" % (a, b)
`;

const TEST_PY = `import unittest

from calc.fmt import pct
from calc.stats import mean


class CalcTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)

    def test_pct(self):
        self.assertEqual(pct(0.25), "25%")


if __name__ == "__main__":
    unittest.main()
`;

/** Writes the fixture project (the seeded bug in two files) into `dir`. */
export function writeReferenceProject(dir: string): void {
  const files: Record<string, string> = {
    "calc/__init__.py": "",
    "calc/stats.py": STATS_PY,
    "calc/fmt.py": FMT_PY,
    "tests/__init__.py": "",
    "tests/test_calc.py": TEST_PY,
  };
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
}

/** Whether the fix landed: both files as a correct agent leaves them. */
export function referenceProjectFixed(dir: string): boolean {
  const stats = fs.readFileSync(path.join(dir, "calc/stats.py"), "utf8");
  const fmt = fs.readFileSync(path.join(dir, "calc/fmt.py"), "utf8");
  return (
    stats === STATS_PY.replace("sum(xs) / (len(xs) + 1)", "sum(xs) / len(xs)") &&
    fmt === FMT_PY.replace("(ratio * 10)", "(ratio * 100)")
  );
}

const PATCH = [
  "*** Begin Patch",
  "*** Update File: calc/stats.py",
  "@@ def mean(xs):",
  "-    return sum(xs) / (len(xs) + 1)",
  "+    return sum(xs) / len(xs)",
  "*** Update File: calc/fmt.py",
  "@@ def pct(ratio):",
  '-    return "%d%%" % (ratio * 10)',
  '+    return "%d%%" % (ratio * 100)',
  "*** End Patch",
  "",
].join("\n");

const TEST_COMMAND = "python3 -m unittest -q 2>&1";

export interface TaskVariant {
  name: string;
  description: string;
  form: FormName;
  /** A query rewrite a reader or proxy applies on the way (test/gym/intermediaries.ts). */
  rewrite?: string;
}

export const TASK_VARIANTS: readonly TaskVariant[] = [
  {
    name: "typed raw",
    description: "typed by hand with the ~ escapes, sent by a WHATWG reader (fetch, Chromium)",
    form: "agent-whatwg",
  },
  { name: "encodeURIComponent", description: "every value through encodeURIComponent", form: "percent-library" },
  { name: "form encoding", description: "URLSearchParams-style: + for spaces, %2B for +", form: "form-urlencoded" },
  {
    name: "encoded again",
    description: "encodeURIComponent, then a reader that percent-encodes the whole target again",
    form: "percent-library",
    rewrite: "double-encode",
  },
];

export interface TaskGet {
  route: string;
  status: number;
  /** Request target bytes sent plus answer body bytes received. */
  bytes: number;
  body: Record<string, unknown>;
}

export interface TaskRun {
  variant: string;
  gets: TaskGet[];
  totalBytes: number;
  /** The test run's answer: exit code and output as the agent read them. */
  exitCode: unknown;
  output: string;
}

/** Plays the task on a session whose read and mutation bases are given; the project must hold the fixture. */
export async function playReferenceTask(bases: { r: string; m: string }, variant: TaskVariant): Promise<TaskRun> {
  const f = form(variant.form);
  const rewrite = variant.rewrite ? queryRewrite(variant.rewrite) : undefined;
  const gets: TaskGet[] = [];
  const get = async (
    base: string,
    route: string,
    params: Array<[string, string]>,
    tail?: string,
  ): Promise<Record<string, unknown>> => {
    const origin = new URL(base).origin;
    const query = [
      ...params.map(([k, v]) => `${k}=${f.value(v)}`),
      ...(tail === undefined ? [] : [`raw=${f.tail(tail)}`]),
    ].join("&");
    // What the agent typed, as its reader sends it: Node's fetch (a WHATWG URL reader, as Chromium is).
    let typed = `${base}/${route}?${query}`;
    if (rewrite) typed = `${origin}${rewriteTarget(typed.slice(origin.length), rewrite)}`;
    const sent = new URL(typed);
    const res = await fetch(sent, { signal: AbortSignal.timeout(60_000) });
    const bytes = Buffer.from(await res.arrayBuffer());
    const body = JSON.parse(bytes.toString("utf8")) as Record<string, unknown>;
    gets.push({
      route,
      status: res.status,
      bytes: Buffer.byteLength(`${sent.pathname}${sent.search}`, "utf8") + bytes.length,
      body,
    });
    return body;
  };

  // 1. Read both files in one GET (each with its whole range: the files are short).
  await get(bases.r, "r", [
    ["path", "calc/stats.py"],
    ["path", "calc/fmt.py"],
  ]);
  // 2. Fix both in one apply_patch.
  await get(bases.m, "a", [], PATCH);
  // 3. Run the tests and read the result in the same answer (wait up to 20 s).
  const result = await get(bases.m, "x", [["wait", "20000"]], TEST_COMMAND);
  return {
    variant: variant.name,
    gets,
    totalBytes: gets.reduce((n, g) => n + g.bytes, 0),
    exitCode: result.exitCode,
    output: typeof result.stdout === "string" ? result.stdout : "",
  };
}
