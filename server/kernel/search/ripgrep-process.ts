// Starts one rg process for /g: through the resident spawner when rg runs confined by the sandbox launcher (so the
// bridge does not fork its own address space per search, server/sandbox/spawner.ts), else a direct spawn.
// Either way the caller gets rg's output streams, a way to signal it, and one promise for its end.
import { spawn } from "node:child_process";
import { Readable } from "node:stream";
import { spawnThroughSpawner, SpawnerLost } from "../../sandbox/spawner.js";

export interface RipgrepEnd {
  /** The exit code (null when killed by a signal or never started). */
  code: number | null;
  /** Set when rg could not be started, or the spawner died under it: the search has no trustworthy answer. */
  failure?: string;
}

export interface RipgrepProcess {
  stdout: Readable;
  stderr: Readable;
  kill(signal: NodeJS.Signals): void;
  /** Resolves once rg (or its launcher) exited and both streams closed, like ChildProcess "close"; never rejects. */
  ended: Promise<RipgrepEnd>;
}

const closed = (stream: Readable) =>
  new Promise<void>((resolve) => (stream.destroyed ? resolve() : stream.once("close", () => resolve())));

/** Starts rg; resolves once it runs (through the spawner that may take a timer's wait, never blocking the event loop). */
export async function startRipgrep(
  command: { command: string; args: string[] },
  confined: boolean,
  cwd: string,
): Promise<RipgrepProcess> {
  if (confined) {
    try {
      // rg has always inherited the bridge's environment (it runs no agent code); it still does.
      const env = Object.fromEntries(
        Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
      );
      const resident = await spawnThroughSpawner({ file: command.command, args: command.args, cwd, env });
      if (resident) {
        const ended = Promise.all([resident.exited, closed(resident.stdout), closed(resident.stderr)]).then(([exit]) =>
          exit.lost ? { code: null, failure: "the command spawner ended during the search" } : { code: exit.code },
        );
        return { stdout: resident.stdout, stderr: resident.stderr, kill: (signal) => resident.kill(signal), ended };
      }
    } catch (error) {
      if (!(error instanceof SpawnerLost)) throw error;
      // Nothing to read: the search answers through the portable engine instead.
      return {
        stdout: Readable.from([]),
        stderr: Readable.from([]),
        kill: () => undefined,
        ended: Promise.resolve({ code: null, failure: error.message }),
      };
    }
  }
  const child = spawn(command.command, command.args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
  const ended = new Promise<RipgrepEnd>((resolve) => {
    child.once("error", (error) => resolve({ code: null, failure: error.message }));
    child.once("close", (code) => resolve({ code }));
  });
  return {
    stdout: child.stdout,
    stderr: child.stderr,
    kill: (signal) => {
      child.kill(signal);
    },
    ended,
  };
}
