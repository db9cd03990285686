// The bridge's search slots (server/kernel/search/search-gate.ts, kernel/tool/slot-gate.ts): however many /g
// arrive at once, at most MAX_CONCURRENT_SEARCHES ripgrep processes run (counted in /proc by the pattern, which
// only these searches carry), every search is still answered in full, and a session that floods the bridge waits
// behind its own searches: another session's one search is served in the next turn, not after the flood.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_CONCURRENT_SEARCHES } from "../../../server/kernel/limits.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url } from "../mutation/fixtures.js";

/** In no file of the machine but the corpus below: rg processes whose command line has it are ours. */
const TOKEN = `gatetoken${process.pid}`;
/** No literal every match must hold, so rg runs its regex over every byte (the filler never has four digits in a row). */
const PATTERN = `[0-9]{4}[a-z]{9}|zq[0-9]{3}${TOKEN}`;
const FILES = 8;
/** Bytes of filler per file: enough that one search takes a while on a shared core. */
const FILE_BYTES = 6 * 1024 * 1024;
const FLOOD = 24;

/** How many rg processes carrying our pattern run now. */
function searchesRunning(): number {
  let n = 0;
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (argv.includes(TOKEN) && fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "rg") n++;
    } catch {
      // Gone meanwhile.
    }
  }
  return n;
}

describe("concurrent /g across the bridge", () => {
  let t: TestBridge;
  let a: AgentSession;
  let b: AgentSession;

  beforeAll(async () => {
    t = await startTestBridge({ URLBRIDGE_GREP_ENGINE: "rg" });
    const line = "lorem ipsum dolor sit amet 123 consectetur adipiscing elit\n";
    const filler = line.repeat(Math.ceil(FILE_BYTES / line.length));
    for (let i = 0; i < FILES; i++)
      fs.writeFileSync(path.join(t.projectDir, `big${i}.txt`), `${filler}zq${100 + i}${TOKEN}\n`);
    a = await t.session({ name: "flood" });
    b = await t.session({ name: "single" });
  });
  afterAll(async () => t.close());

  it(
    "run at most the bridge's slots of ripgrep at once, answering every search in full",
    { timeout: 120_000 },
    async () => {
      let most = 0;
      let seen = 0;
      const sampler = setInterval(() => {
        const now = searchesRunning();
        most = Math.max(most, now);
        if (now > 0) seen++;
      }, 2);
      try {
        const answers = await Promise.all(
          Array.from({ length: FLOOD }, () =>
            agentGet<{ ok: boolean; engine: string; matchedLines: number }>(url(a.r, "g", [["regex", 1]], PATTERN)),
          ),
        );
        for (const answer of answers) expect(answer).toMatchObject({ ok: true, engine: "rg", matchedLines: FILES });
      } finally {
        clearInterval(sampler);
      }
      expect(seen).toBeGreaterThan(0);
      expect(most).toBeGreaterThanOrEqual(1);
      expect(most).toBeLessThanOrEqual(MAX_CONCURRENT_SEARCHES);
    },
  );

  it(
    "serve another session's search in the next turn, ahead of a flood queued before it",
    { timeout: 120_000 },
    async () => {
      const order: string[] = [];
      const search = (session: AgentSession, name: string) =>
        agentGet<{ ok: boolean; matchedLines: number }>(url(session.r, "g", [["regex", 1]], PATTERN)).then((answer) => {
          expect(answer).toMatchObject({ ok: true, matchedLines: FILES });
          order.push(name);
        });
      const flood = Array.from({ length: FLOOD }, (_, i) => search(a, `a${i}`));
      // Once the flood fills every slot and waits behind them, the other session asks once.
      for (let i = 0; i < 2000 && searchesRunning() < MAX_CONCURRENT_SEARCHES; i++)
        await new Promise((resolve) => setTimeout(resolve, 2));
      await Promise.all([...flood, search(b, "b")]);
      // First in line for the next free slot: done about when the slots' worth running as it came, or the next few,
      // are (a plain FIFO puts it last, after the whole flood).
      expect(order.indexOf("b")).toBeLessThanOrEqual(3 * MAX_CONCURRENT_SEARCHES);
      expect(order).toHaveLength(FLOOD + 1);
    },
  );
});
