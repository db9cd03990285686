// A real second process that holds the state file's write lock (BEGIN IMMEDIATE), as a backup tool or another
// writer would, until the test releases it; bounded so a failed test cannot leave it holding the lock.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

const HOLDER_MAX_MS = 60_000;

const HOLDER_SOURCE = `
const Database = require("better-sqlite3");
const db = new Database(process.argv[1]);
db.exec("BEGIN IMMEDIATE");
process.stdout.write("locked\\n");
const release = () => { db.exec("ROLLBACK"); db.close(); process.stdout.write("released\\n"); process.exit(0); };
process.stdin.on("data", release);
process.stdin.on("end", release);
setTimeout(release, ${HOLDER_MAX_MS});
`;

export interface LockHolder {
  /** Ends the transaction, closes the connection and waits for the process to exit. */
  release(): Promise<void>;
}

/** Starts the holder process on `file` and resolves once it holds the write lock. */
export async function holdWriteLock(file: string): Promise<LockHolder> {
  const child: ChildProcess = spawn(process.execPath, ["-e", HOLDER_SOURCE, file], {
    cwd: path.resolve(import.meta.dirname, "../../.."),
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("locked")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the lock holder exited (${code}) before taking the lock`)));
  });
  return {
    async release() {
      if (child.exitCode === null) child.stdin!.end("release\n");
      await exited;
    },
  };
}
