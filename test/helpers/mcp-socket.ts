// A line client for the bridge's MCP socket (<state dir>/mcp.sock): what the stdio relay speaks, driven by hand
// so a test can send exact lines (the first line with the capability, raw bytes, bad JSON) and read each answer.
import net from "node:net";
import { readLines } from "./line-reader.js";

/** Bounds every wait for a line from the bridge. */
export const LINE_TIMEOUT_MS = 10_000;

export interface LineClient {
  send(line: unknown): void;
  sendRaw(text: string): void;
  next(): Promise<string>;
  /** Resolves once the bridge has closed the connection. */
  ended: Promise<void>;
  close(): void;
}

export function connectLines(file: string): Promise<LineClient> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(file);
    let endedResolve!: () => void;
    const ended = new Promise<void>((r) => (endedResolve = r));
    const lines = readLines(socket, LINE_TIMEOUT_MS, () => "no line from the bridge in time");
    socket.on("close", endedResolve);
    socket.once("error", reject);
    socket.once("connect", () =>
      resolve({
        send: (line) => socket.write(`${JSON.stringify(line)}\n`),
        sendRaw: (text) => socket.write(text),
        next: lines.next,
        ended,
        close: () => socket.destroy(),
      }),
    );
  });
}

/** The capability in a session's base URL (its last path segment), as the relay presents it. */
export const bearerOf = (base: string) => base.split("/").pop()!;
