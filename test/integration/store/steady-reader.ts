// A real second process that keeps reading the state file: each read a transaction of its own that holds its
// snapshot for a moment, one after another with no pause, as the bridge's readers are under load; bounded so a
// failed test cannot leave it running.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

const READER_MAX_MS = 60_000;
/** How long each read transaction holds its snapshot (a wait inside it, so the reader costs no CPU meanwhile). */
const HOLD_MS = 1;

const READER_SOURCE = `
const Database = require("better-sqlite3");
const db = new Database(process.argv[1], { readonly: true });
const count = db.prepare("SELECT count(*) AS n FROM sqlite_master");
const pause = new Int32Array(new SharedArrayBuffer(4));
let reads = 0;
let stopping = false;
const read = () => {
  if (stopping) return;
  db.exec("BEGIN");
  count.get();
  Atomics.wait(pause, 0, 0, ${HOLD_MS});
  count.get();
  db.exec("COMMIT");
  reads += 1;
  if (reads === 1) process.stdout.write("reading\\n");
  setImmediate(read);
};
const stop = () => { stopping = true; db.close(); process.stdout.write("reads " + reads + "\\n"); process.exit(0); };
process.stdin.on("data", stop);
process.stdin.on("end", stop);
setTimeout(stop, ${READER_MAX_MS});
read();
`;

export interface SteadyReader {
  /** Stops reading, closes the connection and resolves with how many read transactions it made. */
  stop(): Promise<number>;
}

/** Starts the reader on `file` and resolves once it has made its first read. */
export async function startSteadyReader(file: string): Promise<SteadyReader> {
  const child: ChildProcess = spawn(process.execPath, ["-e", READER_SOURCE, file], {
    cwd: path.resolve(import.meta.dirname, "../../.."),
    stdio: ["pipe", "pipe", "inherit"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("reading")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the reader exited (${code}) before its first read`)));
  });
  return {
    async stop() {
      if (child.exitCode === null) child.stdin!.end("stop\n");
      await exited;
      return Number(/reads (\d+)/.exec(output)?.[1] ?? Number.NaN);
    },
  };
}
