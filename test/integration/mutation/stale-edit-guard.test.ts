// Issue 27 item 2: a stale /e's retry lands only on the lines the answer showed. With near-identical neighbour
// blocks no retry is offered (the margin over the runner-up is too small); an offered retry is guarded (atLine,
// blockHash) and changes exactly the excerpt's lines or, once the file changed again, nothing (edit_target_changed).
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RETRY_MARGIN } from "../../../server/mutation/files/nearest-lines.js";
import { connectMcpClient, tokenOfBase } from "../../helpers/mcp-clients.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { pick, seededRandom } from "../../helpers/seeded-random.js";
import { url } from "./fixtures.js";

type Body = Record<string, unknown> & {
  ok: boolean;
  errorCode?: string;
  errorDetail?: Record<string, unknown>;
  dedupe?: string;
};
const WAIT_MS = 20_000;
type Nearest = {
  startLine: number;
  endLine: number;
  similarity: number;
  runnerUp?: { startLine: number; similarity: number };
  margin: number;
  atLine?: number;
  blockHash?: string;
};

/** Two sibling functions whose docstrings differ in one word (the field report's similarity-0.98 case). */
const SIBLINGS = [
  "import math",
  "",
  "",
  "def area_circle(r):",
  '    """Compute the area of the circle, rounded to 2 places."""',
  "    return round(math.pi * r * r, 2)",
  "",
  "",
  "def area_square(r):",
  '    """Compute the area of the square, rounded to 2 places."""',
  "    return round(r * r, 2)",
  "",
].join("\n");

/** A generated file: 12 blocks of 5 lines that differ only in their index (line 7 vs line 67 in the report). */
function generated(values: (i: number) => string): string {
  const lines: string[] = ["# generated: do not edit", ""];
  for (let i = 0; i < 12; i++)
    lines.push(`entry_${i} = {`, `    "name": "item",`, `    "value": ${values(i)},`, "}", "");
  return lines.join("\n");
}

describe("stale /e retries that cannot land elsewhere", () => {
  let t: TestBridge;
  let s: AgentSession;
  const file = (rel: string) => path.join(t.projectDir, rel);
  // wait=: the first failed edit starts the nearest-lines worker, which from source (tsx) can take over the default wait.
  const edit = (rel: string, old: string, replacement: string, run?: string) =>
    agentGet<Body>(
      url(
        s.m!,
        "e",
        [["path", rel], ["old", old], ["wait", WAIT_MS], ...(run ? [["run", run] as [string, string]] : [])],
        replacement,
      ),
    );
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true });
  });
  afterAll(async () => t.close());

  it("offers no retry when a sibling's docstring is nearly as similar, and says which lines compete", async () => {
    writeAsAgent(file("shapes.py"), SIBLINGS);
    // The agent's old is the circle docstring as it was before someone changed its precision.
    const stale = '    """Compute the area of the circle, rounded to 3 places."""';
    const body = await edit("shapes.py", stale, '    """Area of a circle."""');
    expect(body).toMatchObject({ ok: false, errorCode: "edit_no_match" });
    const nearest = body.errorDetail!.nearest as Nearest;
    expect(nearest.runnerUp).toBeDefined();
    expect(nearest.margin).toBeLessThan(RETRY_MARGIN);
    expect(body.retry).toBeUndefined();
    expect(nearest.atLine).toBeUndefined();
    expect(String(body.repairHint)).toContain(`margin ${nearest.margin} is under ${RETRY_MARGIN}`);
    expect(fs.readFileSync(file("shapes.py"), "utf8")).toBe(SIBLINGS);
  });

  it("offers no retry into a generated file's repeated blocks", async () => {
    const before = generated((i) => String(i * 10));
    writeAsAgent(file("gen.py"), before);
    // A stale old whose middle lines differ from every block by more than the block-anchor strategy tolerates (one of
    // three middle lines in common), so no tolerant strategy finds it and the nearest-lines search decides.
    const body = await edit(
      "gen.py",
      'entry_1 = {\n    "name": "item",\n    "value": 11,\n    "unit": "cm",\n}',
      'entry_1 = {\n    "name": "item",\n    "value": 12,\n}',
    );
    expect(body).toMatchObject({ ok: false, errorCode: "edit_no_match" });
    expect(body.retry).toBeUndefined();
    expect(fs.readFileSync(file("gen.py"), "utf8")).toBe(before);
  });

  describe("a retry offered for a clear winner", () => {
    const before = [
      "def load(path):",
      "    with open(path) as f:",
      "        return f.read()",
      "",
      "",
      "def save(path, text):",
      "    with open(path, 'w') as f:",
      "        f.write(text)",
      "",
    ].join("\n");
    const stale = "def save(path, data):\n    with open(path, 'w') as f:\n        f.write(data)\n";
    const replacement =
      "def save(path, text):\n    with open(path, 'w', encoding='utf-8') as f:\n        f.write(text)\n";
    let first: Body;

    beforeAll(async () => {
      writeAsAgent(file("io.py"), before);
      first = await edit("io.py", stale, replacement);
    });

    it("is guarded, names its margin, and never repeats the refused request", () => {
      expect(first).toMatchObject({ ok: false, errorCode: "edit_no_match" });
      const nearest = first.errorDetail!.nearest as Nearest;
      expect(nearest).toMatchObject({ startLine: 6, endLine: 8, atLine: 6 });
      expect(nearest.margin).toBeGreaterThanOrEqual(RETRY_MARGIN);
      expect(nearest.blockHash).toMatch(/^[0-9a-f]{16}$/);
      const retry = new URL(String(first.retry));
      expect(retry.searchParams.get("atLine")).toBe("6");
      expect(retry.searchParams.get("blockHash")).toBe(nearest.blockHash);
      expect(retry.searchParams.get("old")).not.toBe(stale);
    });

    it("a replay of the refused call answers the same guarded retry, not the refused request again", async () => {
      const replayed = await edit("io.py", stale, replacement);
      expect(replayed).toMatchObject({ ok: false, errorCode: "edit_no_match", dedupe: "replayed" });
      expect(replayed.retry).toBe(first.retry);
      expect(new URL(String(replayed.retry)).searchParams.get("old")).not.toBe(stale);
    });

    it.each([
      ["a line inserted above moves the block", (text: string) => `# header\n${text}`, "moved"],
      [
        "a context line the excerpt showed changed",
        (text: string) => text.replace("f.read()\n\n\n", "f.read()\n\n# writer\n"),
        "context_changed",
      ],
      [
        "the block itself changed",
        (text: string) => text.replace("with open(path, 'w') as f:", "with open(path, 'a') as f:"),
        "changed",
      ],
      [
        "the block now occurs twice",
        (text: string) => `${text}\n\ndef save(path, text):\n    with open(path, 'w') as f:\n        f.write(text)\n`,
        "not_unique",
      ],
    ])("refuses after the file changed again: %s", async (name, change, reason) => {
      // Each case gets its own refusal (run=): a retry URL, once followed, answers its recorded outcome.
      writeAsAgent(file("io.py"), before);
      const offered = await edit("io.py", stale, replacement, name.replaceAll(" ", "-"));
      expect(offered.errorDetail!.nearest).toMatchObject({ atLine: 6 });
      const changed = change(before);
      writeAsAgent(file("io.py"), changed);
      const refused = await agentGet<Body>(String(offered.retry));
      expect(refused).toMatchObject({
        ok: false,
        errorCode: "edit_target_changed",
        retryable: false,
        agentAction: "reread_then_retry",
        errorDetail: { atLine: 6, reason },
      });
      expect(refused.retry).toBeUndefined();
      expect(fs.readFileSync(file("io.py"), "utf8")).toBe(changed);
      expect(await agentGet<Body>(String(refused.read))).toMatchObject({ ok: true });
    });

    it("changes exactly the lines the excerpt showed while they are still there", async () => {
      writeAsAgent(file("io.py"), before);
      // A fresh refusal (the earlier retry's intent is recorded as refused), then its retry as returned.
      const again = await edit("io.py", stale, replacement, "again");
      expect(String(again.excerpt)).toContain("6: def save(path, text):");
      const done = await agentGet<Body>(String(again.retry));
      expect(done).toMatchObject({ ok: true, line: 6 });
      expect(fs.readFileSync(file("io.py"), "utf8")).toBe(
        before.replace("def save(path, text):\n    with open(path, 'w') as f:\n        f.write(text)\n", replacement),
      );
    });
  });

  it("the neighbour made identical after the answer: the retry refuses instead of editing line 67 for line 7", async () => {
    // One block differs (line 7's value), so the winner is clear and a retry is offered for it.
    const lines = Array.from(
      { length: 70 },
      (_, i) => `row_${String(i + 1).padStart(2, "0")}: unique payload ${i * 7919} alpha beta gamma`,
    );
    lines[6] = "target: config value = 42 # the line the agent means";
    const before = `${lines.join("\n")}\n`;
    writeAsAgent(file("rows.txt"), before);
    const body = await edit(
      "rows.txt",
      "target: config value = 41 # the line the agent means",
      "target: config value = 43 # the line the agent means",
    );
    expect(body.errorDetail!.nearest).toMatchObject({ startLine: 7, atLine: 7 });
    expect(typeof body.retry).toBe("string");
    // Then line 7 is changed by someone else and line 67 becomes exactly what line 7 was.
    const after = [...lines];
    after[6] = "target: config value = 40 # changed by someone else";
    after[66] = "target: config value = 42 # the line the agent means";
    writeAsAgent(file("rows.txt"), `${after.join("\n")}\n`);
    const refused = await agentGet<Body>(String(body.retry));
    expect(refused).toMatchObject({
      ok: false,
      errorCode: "edit_target_changed",
      errorDetail: { reason: "moved", foundAtLines: [67] },
    });
    expect(fs.readFileSync(file("rows.txt"), "utf8")).toBe(`${after.join("\n")}\n`);
  });

  it("over MCP: the failure carries the same guarded edit as arguments, which applies once and refuses after a change", async () => {
    const before = "alpha = 1\nbeta = 2\ngamma = 3\n";
    writeAsAgent(file("mcp.py"), before);
    const client = await connectMcpClient(new URL(s.m!).origin, tokenOfBase(s.m!), { sdk: "v2" });
    try {
      const call = async (args: Record<string, unknown>) => {
        const result = await client.callTool({ name: "edit", arguments: args });
        return {
          body: result.structuredContent as Body,
          text: (result.content as Array<{ text?: string }>)[0]?.text ?? "",
        };
      };
      const failed = await call({ path: "mcp.py", oldString: "beta = 20", newString: "beta = 30" });
      expect(failed.body).toMatchObject({
        ok: false,
        errorCode: "edit_no_match",
        errorDetail: { nearest: { startLine: 2, atLine: 2 } },
      });
      expect(failed.body.retry).toBeUndefined();
      const next = failed.body.retryArguments as Record<string, unknown>;
      expect(next).toMatchObject({ path: "mcp.py", oldString: "beta = 2", newString: "beta = 30", atLine: 2 });
      expect(failed.text).toContain("retryArguments");
      // The file changes again: a line above moves the block, and the guarded call refuses.
      writeAsAgent(file("mcp.py"), `# moved\n${before}`);
      expect((await call(next)).body).toMatchObject({
        ok: false,
        errorCode: "edit_target_changed",
        errorDetail: { reason: "moved", foundAtLines: [3] },
      });
      expect(fs.readFileSync(file("mcp.py"), "utf8")).toBe(`# moved\n${before}`);
      // Back as the answer showed it: the guarded call changes exactly that line.
      writeAsAgent(file("mcp.py"), before);
      expect((await call(next)).body).toMatchObject({ ok: true, line: 2 });
      expect(fs.readFileSync(file("mcp.py"), "utf8")).toBe("alpha = 1\nbeta = 30\ngamma = 3\n");
    } finally {
      await client.close();
    }
  });

  it("150 seeded stale edits into files of near-identical blocks, some changed again before the retry: every applied retry changed exactly the lines its answer named", async () => {
    const rand = seededRandom(2027);
    const tally = { offered: 0, applied: 0, refused: 0, none: 0 };
    for (let n = 0; n < 150; n++) {
      // Blocks that differ in one token, as generated code and sibling functions do.
      const lines: string[] = [];
      for (let b = 0; b < 6 + Math.floor(rand() * 6); b++) {
        const k = Math.floor(rand() * 4);
        lines.push(
          `def handler_${k}(event):`,
          `    value = compute(event, ${k}, "${pick(rand, ["alpha", "beta", "gamma"])}")`,
          `    return value * ${k + 1}`,
          "",
        );
        // Some blocks also carry a line of their own, which a stale edit can clearly name.
        if (rand() < 0.5)
          lines.splice(
            lines.length - 1,
            0,
            `    log.info("block ${b} ${pick(rand, ["opened", "closed", "moved", "saved"])} the ${pick(rand, ["file", "socket", "queue"])}")`,
          );
      }
      const text = `${lines.join("\n")}\n`;
      const rel = `gen-${n}.py`;
      writeAsAgent(file(rel), text);
      // The agent's stale view of one block: one line of it, with one character changed.
      const line = Math.floor(rand() * lines.length);
      if (lines[line]!.length < 4) continue;
      const at = 1 + Math.floor(rand() * (lines[line]!.length - 2));
      const stale = lines[line]!.slice(0, at) + (lines[line]![at] === "x" ? "y" : "x") + lines[line]!.slice(at + 1);
      if (text.includes(stale)) continue;
      const replacement = `${stale}  # edited ${n}`;
      const body = await edit(rel, stale, replacement, `fuzz-${n}`);
      expect(body).toMatchObject({ ok: false, errorCode: "edit_no_match" });
      if (typeof body.retry !== "string") {
        tally.none++;
        continue;
      }
      tally.offered++;
      const nearest = body.errorDetail!.nearest as Nearest;
      // The lines the answer named, as the file held them then (the retry's old, in the URL's own grammar).
      const target = lines.slice(nearest.startLine - 1, nearest.endLine).join("\n");
      expect(String(body.excerpt)).toContain(`${nearest.startLine}: ${lines[nearest.startLine - 1]}`);
      // Sometimes the file changes again before the retry is followed.
      const current = [...lines];
      const change = pick(rand, ["none", "insert-above", "edit-context", "copy-neighbour", "edit-target"]);
      if (change === "insert-above") current.unshift("# inserted");
      if (change === "edit-context" && nearest.startLine > 1) current[nearest.startLine - 2] += " # touched";
      if (change === "copy-neighbour")
        current[(nearest.startLine + 3) % current.length] = current[nearest.startLine - 1]!;
      if (change === "edit-target") current[nearest.startLine - 1] += " # someone else";
      const before = `${current.join("\n")}\n`;
      writeAsAgent(file(rel), before);
      const followed = await agentGet<Body>(body.retry);
      const after = fs.readFileSync(file(rel), "utf8");
      if (followed.ok) {
        tally.applied++;
        // Applied: the named lines held exactly the retry's old, and only they changed.
        expect(current.slice(nearest.startLine - 1, nearest.endLine).join("\n"), `case ${n} (${change})`).toBe(target);
        const expected = [
          ...current.slice(0, nearest.startLine - 1),
          ...replacement.split("\n"),
          ...current.slice(nearest.endLine),
        ];
        expect(after, `case ${n} (${change})`).toBe(`${expected.join("\n")}\n`);
      } else {
        tally.refused++;
        expect(followed.errorCode, `case ${n} (${change})`).toBe("edit_target_changed");
        expect(after).toBe(before);
      }
    }
    console.log(`seeded stale edits: ${JSON.stringify(tally)}`);
    // The cases exercised both outcomes, and the margin withheld some retries.
    expect(tally.applied).toBeGreaterThan(0);
    expect(tally.refused).toBeGreaterThan(0);
    expect(tally.none).toBeGreaterThan(0);
  }, 120_000);

  it("refuses blockHash without atLine", async () => {
    writeAsAgent(file("g.txt"), "a\n");
    const body = await agentGet<Body>(
      url(
        s.m!,
        "e",
        [
          ["path", "g.txt"],
          ["old", "a"],
          ["blockHash", "0123456789abcdef"],
        ],
        "b",
      ),
    );
    expect(body).toMatchObject({ ok: false, errorCode: "missing_parameter", errorDetail: { parameter: "atLine" } });
  });
});
