// Runs the real `urlbridge` command (bin/urlbridge.js) as a child process with a controlled environment.
import { execFile } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "bin", "urlbridge.js");
const CLI_TIMEOUT_MS = 30_000;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment the CLI sees: nothing from this process's URLBRIDGE_* variables leaks in. */
export function cliEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("URLBRIDGE_")));
  return { ...base, URLBRIDGE_LOG_LEVEL: "warn", ...env };
}

export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: cliEnv(env), timeout: CLI_TIMEOUT_MS },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A port nothing listens on (bound once, then released). */
export async function unusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
