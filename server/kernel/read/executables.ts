// Finds executables on PATH without running them: what /p reports and how /g decides whether rg is there.
import fs from "node:fs/promises";
import path from "node:path";

async function isExecutableFile(candidate: string): Promise<boolean> {
  try {
    const info = await fs.stat(candidate);
    if (!info.isFile()) return false;
    await fs.access(candidate, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first PATH entry holding an executable `name`, or undefined. */
export async function locateExecutable(name: string, searchPath: string | undefined = process.env.PATH): Promise<string | undefined> {
  for (const dir of (searchPath ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, name);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}
