// Where a worker module of ours is, from the module that starts it: in the built server every module sits in
// dist/server/ (scripts/vite.server.config.ts builds each worker as an entry of its own, `<name>.js`); run from
// source (tests, `tsx server/main.ts`) it is `<name>.ts` beside the caller, started through ts-worker-boot.mjs,
// which registers tsx in the worker first (a worker thread does not inherit the loader that runs its parent).
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export interface WorkerEntry {
  file: URL;
  workerData?: { entry: string };
}

/** The worker module `name` beside the module at `callerUrl` (its import.meta.url). */
export function workerEntry(callerUrl: string, name: string): WorkerEntry {
  const dir = path.dirname(fileURLToPath(callerUrl));
  if (!callerUrl.endsWith(".ts")) return { file: pathToFileURL(path.join(dir, `${name}.js`)) };
  const boot = path.join(path.dirname(fileURLToPath(import.meta.url)), "ts-worker-boot.mjs");
  return { file: pathToFileURL(boot), workerData: { entry: pathToFileURL(path.join(dir, `${name}.ts`)).href } };
}
