// Crash-safe file operations: every write goes to a temp file in the target's directory, is fsynced, renamed
// over the target and the directory fsynced, so a reader (or a crash) sees the old bytes or the new, never half.
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";

/** fsyncs a directory so a rename, create or unlink inside it survives power loss. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export interface AtomicWriteOptions {
  /** Permission bits to give the file (e.g. the replaced file's). Default: 0o666 minus the umask. */
  mode?: number;
}

const TEMP_SUFFIX = ".urlbridge-tmp";

export async function writeFileAtomic(target: string, bytes: Buffer, options: AtomicWriteOptions = {}): Promise<void> {
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString("hex")}${TEMP_SUFFIX}`);
  const handle = await fs.open(temp, "wx");
  try {
    try {
      await handle.writeFile(bytes);
      // chmod, unlike the create mode, is not narrowed by the umask: the replaced file's mode comes back exactly.
      if (options.mode !== undefined) await handle.chmod(options.mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, target);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(dir);
}

/** Removes a file if it exists; true when something was removed. */
export async function removeFileDurably(target: string): Promise<boolean> {
  try {
    await fs.unlink(target);
  } catch (error) {
    // ENOTDIR: a parent is a file, so the path cannot exist either.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return false;
    throw error;
  }
  await syncDirectory(path.dirname(target));
  return true;
}

/** Directories between `root` and `dir` (inclusive) that do not exist yet, outermost first. */
export async function missingDirectories(root: string, dir: string): Promise<string[]> {
  const missing: string[] = [];
  let current = dir;
  while (current !== root && current.startsWith(root + path.sep)) {
    try {
      await fs.stat(current);
      break;
    } catch {
      missing.unshift(current);
      current = path.dirname(current);
    }
  }
  return missing;
}

/** Creates dir and its missing parents, syncing each parent so the new entries are durable. */
export async function ensureDirectory(root: string, dir: string): Promise<void> {
  const missing = await missingDirectories(root, dir);
  for (const created of missing) {
    await fs.mkdir(created).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
    await syncDirectory(path.dirname(created));
  }
}

/** Removes temp files a killed process left next to target mid-write; returns the removed paths. */
export async function removeStaleTempFiles(target: string): Promise<string[]> {
  const dir = path.dirname(target);
  const prefix = `.${path.basename(target)}.`;
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return [];
  }
  const stale = names.filter((n) => n.startsWith(prefix) && n.endsWith(TEMP_SUFFIX) && /^[0-9a-f]{12}$/.test(n.slice(prefix.length, -TEMP_SUFFIX.length)));
  for (const name of stale) await fs.rm(path.join(dir, name), { force: true });
  return stale.map((n) => path.join(dir, n));
}
