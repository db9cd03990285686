// Secrets the state directory keeps beside the database (the capability key, the operator token) are written so
// that a crash or power loss right after the first start leaves the whole file or none of it (issue 28, item 4):
// a temp file, its fsync, an atomic link or rename into place, then an fsync of the folder that names it.
import fs from "node:fs";
import path from "node:path";

export interface DurableWriteOptions {
  mode: number;
  /** true: fail with EEXIST when the file exists (another process created it first); false: replace it. */
  exclusive: boolean;
}

/** fsync of a file or a folder, so its contents or the names in it survive a power loss. */
export function fsyncPath(target: string): void {
  const fd = fs.openSync(target, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes `data` to `file` whole or not at all, durably; see the module header. */
export function writeFileDurably(file: string, data: Buffer | string, options: DurableWriteOptions): void {
  const temp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(temp, "w", options.mode);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    // link() never replaces an existing name, rename() always does: both are atomic.
    if (options.exclusive) fs.linkSync(temp, file);
    else fs.renameSync(temp, file);
  } finally {
    fs.rmSync(temp, { force: true });
  }
  fsyncPath(path.dirname(file));
}
