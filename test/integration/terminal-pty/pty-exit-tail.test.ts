// The end of a pty=1 process's output survives its exit: a program that prints a known text ending in a sentinel and
// exits at once, run again and again, leaves every byte in the replay (or, past the replay's bound, exactly the
// bytes it dropped reported as lost) and the sentinel on the screen. Before pty-stream.ts read the PTY to its end,
// about half of these runs lost up to 12 KiB of the tail without saying so.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PTY_REPLAY_BYTES } from "../../../server/mutation/terminal/pty/pty-limits.js";
import { makeTempDir } from "../../helpers/bridge.js";
import { startTestPty } from "./pty-helpers.js";

const SENTINEL = "<<END-OF-TAIL>>";
/** Runs per size: enough that a loss seen in one run in two before the fix cannot pass by chance. */
const RUNS = Number(process.env.PTY_TAIL_RUNS ?? 20);

const shutdown = new AbortController();
afterAll(() => shutdown.abort());

/** `bytes` of letters ending in the sentinel, with no newline: the PTY passes every byte through unchanged. */
function tailText(bytes: number): string {
  const letters = "abcdefghijklmnopqrstuvwxyz".repeat(Math.ceil(bytes / 26)).slice(0, bytes - SENTINEL.length);
  return letters + SENTINEL;
}

describe("output at a pty=1 process's exit", () => {
  const cwd = makeTempDir("pty-exit-tail");

  async function printAndExit(file: string) {
    const pty = await startTestPty(`cat ${file}`, { cwd, signal: shutdown.signal });
    expect(await pty.ended).toMatchObject({ exitCode: 0, reason: "exited" });
    return pty;
  }

  it(`keeps all of a 64 KiB print-and-exit, ${RUNS} runs out of ${RUNS}`, { timeout: 300_000 }, async () => {
    const text = tailText(64 * 1024);
    fs.writeFileSync(path.join(cwd, "tail-64k.txt"), text);
    const received: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const pty = await printAndExit("tail-64k.txt");
      const page = pty.read(0, PTY_REPLAY_BYTES);
      received.push(page.endOffset);
      expect(page.lostBytes).toBe(0);
      expect(page.text === text, `run ${run}: ${page.endOffset} bytes of ${text.length}`).toBe(true);
      expect(pty.screen(0).screen.endsWith(SENTINEL)).toBe(true);
      pty.dispose();
    }
    expect(received).toEqual(Array.from({ length: RUNS }, () => text.length));
  });

  it(
    "past the replay's bound, counts exactly the bytes it dropped and keeps the tail",
    { timeout: 300_000 },
    async () => {
      // Larger than the replay and than the emulator's backlog bound: reading pauses, and the exit comes while paused.
      const text = tailText(3 * 1024 * 1024);
      fs.writeFileSync(path.join(cwd, "tail-3m.txt"), text);
      for (let run = 0; run < Math.ceil(RUNS / 4); run++) {
        const pty = await printAndExit("tail-3m.txt");
        const first = pty.read(0, 1024);
        expect(first.endOffset, `run ${run}`).toBe(text.length);
        expect(first.lostBytes).toBe(text.length - PTY_REPLAY_BYTES);
        const last = pty.read(text.length - SENTINEL.length - 10, 1024);
        expect(last.text).toBe(text.slice(-SENTINEL.length - 10));
        expect(pty.screen(0).screen.endsWith(SENTINEL)).toBe(true);
        pty.dispose();
      }
    },
  );
});
