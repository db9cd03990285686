// Whether a module is the process's entry script. Node resolves symlinks before it loads the entry, so
// import.meta.url is the real path while argv[1] may be a symlinked checkout path (`node <link>/dist/server/main.js`):
// both are compared as real paths, or such a start would load the module, run nothing and exit 0.
import fs from "node:fs";
import { fileURLToPath } from "node:url";

export function isEntryPoint(moduleUrl: string, argv1: string | undefined = process.argv[1]): boolean {
  if (!argv1) return false;
  try {
    return fs.realpathSync(argv1) === fs.realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}
