// Newline-framed text from a stream, one line at a time: lines that arrive before anyone asks wait in order, and
// each next() waits a bounded time. Shared by the MCP socket's line client and the driven stdio relay.
import type { Readable } from "node:stream";

export interface LineReader {
  /** The next line (without its newline); rejects with `timeoutMessage()` past `timeoutMs`. */
  next(): Promise<string>;
}

export function readLines(stream: Readable, timeoutMs: number, timeoutMessage: () => string): LineReader {
  let buffered = "";
  const lines: string[] = [];
  const waiters: Array<(line: string) => void> = [];
  stream.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let newline;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  return {
    next: () => {
      const ready = lines.shift();
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise((wake, fail) => {
        const timer = setTimeout(() => fail(new Error(timeoutMessage())), timeoutMs);
        waiters.push((line) => {
          clearTimeout(timer);
          wake(line);
        });
      });
    },
  };
}
