// A pty=1 process that prints 200 MB: the PTY pauses while the emulator catches up, the replay keeps only its
// bound, memory stays bounded, and every byte the program wrote is accounted for: the bytes kept plus the bytes
// reported lost are exactly what it printed (with the PTY's \r before each \n), its last line included.
import { afterAll, describe, expect, it } from "vitest";
import { PTY_REPLAY_BYTES, PTY_SCROLLBACK_LINES } from "../../../server/mutation/terminal/pty/pty-limits.js";
import { makeTempDir } from "../../helpers/bridge.js";
import { startTestPty } from "./pty-helpers.js";

const FLOOD_BYTES = 200 * 1000 * 1000;
const LINE = "x".repeat(98);
/** yes prints LINE and a newline; head cuts the last of those lines short. */
const LINE_BYTES = LINE.length + 1;
const LAST_LINE_BYTES = FLOOD_BYTES % LINE_BYTES;
/** Far below the flood: what the bounds allow plus the emulator, V8 and test slack. */
const MAX_GROWTH_BYTES = 160 * 1024 * 1024;

const shutdown = new AbortController();
afterAll(() => shutdown.abort());

describe("a 200 MB flood", () => {
  it("keeps memory bounded and reports the bytes it dropped", { timeout: 600_000 }, async () => {
    const cwd = makeTempDir("pty-flood");
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    // 99-byte lines: the screen scrolls, so the scrollback bound is exercised as well as the replay bound.
    const pty = await startTestPty(`yes '${LINE}' | head -c ${FLOOD_BYTES}`, { cwd, signal: shutdown.signal });
    const end = await pty.ended;
    clearInterval(sampler);
    expect(end).toMatchObject({ exitCode: 0, reason: "exited" });
    const written = pty.replay.endOffset;
    // The PTY turns each \n into \r\n: one byte more per whole line, and not one byte missing.
    expect(written).toBe(FLOOD_BYTES + Math.floor(FLOOD_BYTES / LINE_BYTES));
    const page = pty.read(0, 1024);
    expect(page.lostBytes).toBe(written - PTY_REPLAY_BYTES);
    expect(page.offset).toBe(page.lostBytes);
    const tail = pty.read(written - (LINE.length + 2 + LAST_LINE_BYTES), 1024);
    expect(tail.text).toBe(`${LINE}\r\n${LINE.slice(0, LAST_LINE_BYTES)}`);
    const screen = pty.screen(PTY_SCROLLBACK_LINES);
    // The emulator parsed the flood: the screen is full and the scrollback is at its bound, not past it.
    expect(screen.screen.split("\n")).toHaveLength(24);
    expect(screen.scrollbackTotal).toBe(PTY_SCROLLBACK_LINES);
    console.log(
      `flood: ${written} bytes, peak RSS growth ${Math.round((peak - before) / 1048576)} MiB, lost ${page.lostBytes}`,
    );
    expect(peak - before).toBeLessThan(MAX_GROWTH_BYTES);
  });
});
