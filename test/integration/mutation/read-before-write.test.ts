// The read-before-write rule, one table for both transports (issue 26 item 5): write may replace an existing
// file only when this session was shown all of its current version. Only what the agent was shown counts: a
// failed edit, a replaceAll or a successful edit reads nothing on the agent's behalf.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { openTransport, type Transport } from "./edit-transports.js";

type Step = { read: [offset: number, limit: number] } | { edit: string; replaceAll?: boolean } | { changeOnDisk: true };

const LINES = 200;
const ORIGINAL = Array.from({ length: LINES }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

const TABLE: Array<[string, Step[], "ok" | "stale_read"]> = [
  ["nothing read", [], "stale_read"],
  ["3 of 200 lines seen, then a failed edit", [{ read: [1, 3] }, { edit: "no such text" }], "stale_read"],
  [
    "3 of 200 lines seen, then a failed replaceAll",
    [{ read: [1, 3] }, { edit: "no such text", replaceAll: true }],
    "stale_read",
  ],
  [
    "3 of 200 lines seen, then a successful replaceAll",
    [{ read: [1, 3] }, { edit: "line 7\n", replaceAll: true }],
    "stale_read",
  ],
  ["every line seen in two pages", [{ read: [1, 100] }, { read: [101, 100] }], "ok"],
  ["every line seen but the last", [{ read: [1, 199] }], "stale_read"],
  ["every line seen, then the file changed on disk", [{ read: [1, LINES] }, { changeOnDisk: true }], "stale_read"],
  [
    "every line seen, then a successful edit (only its diff was shown)",
    [{ read: [1, LINES] }, { edit: "line 5\n" }],
    "stale_read",
  ],
];

let tb: TestBridge;
const transports = {} as Record<"url" | "mcp", Transport>;

beforeAll(async () => {
  tb = await startTestBridge();
  transports.url = await openTransport(tb, "url");
  transports.mcp = await openTransport(tb, "mcp");
});

afterAll(async () => {
  for (const t of Object.values(transports)) await t.close();
  await tb.close();
});

describe.each(["url", "mcp"] as const)("over %s", (name) => {
  it.each(TABLE)("write after %s answers %s", async (title, steps, expected) => {
    const t = transports[name];
    const rel = `rbw-${title.replace(/\W+/g, "-")}.txt`;
    const file = path.join(t.root, rel);
    writeAsAgent(file, ORIGINAL);
    for (const step of steps) {
      if ("read" in step)
        expect((await t.read({ filePath: rel, offset: step.read[0], limit: step.read[1] })).body.ok).toBe(true);
      else if ("edit" in step)
        await t.edit({
          filePath: rel,
          oldString: step.edit,
          newString: "changed\n",
          ...(step.replaceAll ? { replaceAll: true } : {}),
        });
      else fs.appendFileSync(file, "appended\n");
    }
    const before = fs.readFileSync(file, "utf8");
    const written = await t.write({ filePath: rel, content: "replaced whole\n" });
    if (expected === "ok") {
      expect(written.body).toMatchObject({ ok: true, created: false });
      expect(fs.readFileSync(file, "utf8")).toBe("replaced whole\n");
    } else {
      expect(written.body).toMatchObject({ ok: false, errorCode: "stale_read" });
      expect(fs.readFileSync(file, "utf8")).toBe(before);
    }
  });

  it("creates a new file without any read", async () => {
    const written = await transports[name].write({ filePath: "rbw-new.txt", content: "new\n" });
    expect(written.body).toMatchObject({ ok: true, created: true });
  });
});
