// The real `urlbridge mcp --session <name>` as a child process, driven line by line: a test writes exact JSON-RPC
// lines to its stdin and reads each line it writes to stdout (what an MCP client over stdio sees).
import { spawn } from "node:child_process";
import { BIN } from "../integration/cli/run-cli.js";
import { readLines } from "./line-reader.js";

/** Bounds every wait for a line from the relay, and its exit. */
export const RELAY_LINE_TIMEOUT_MS = 20_000;

export interface RelayProcess {
  send(message: unknown): void;
  next(): Promise<string>;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Closes stdin and resolves with the exit code (SIGKILL past the bound). */
  end(): Promise<number | null>;
}

export function startRelay(session: string, env: NodeJS.ProcessEnv): RelayProcess {
  const child = spawn(process.execPath, [BIN, "mcp", "--session", session], { env, stdio: ["pipe", "pipe", "pipe"] });
  let errors = "";
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  const lines = readLines(
    child.stdout,
    RELAY_LINE_TIMEOUT_MS,
    () => `no line from the relay in time; stderr: ${errors}`,
  );
  child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString("utf8")));
  child.stdin.on("error", () => {});
  return {
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    next: lines.next,
    stderr: () => errors,
    end: () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), RELAY_LINE_TIMEOUT_MS);
      return closed.finally(() => clearTimeout(timer));
    },
  };
}
