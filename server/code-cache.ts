// A V8 code cache for the built server (dist/server/, CommonJS chunks): compiling the ~1.7 MB the bundle loads
// at start-up was a fifth of its CPU, and Node 20 has no module.enableCompileCache. The entry chunks install
// this before they require the others (scripts/vite.server.config.ts, output.intro): each chunk of the same
// folder is compiled with the bytecode V8 serialized after an earlier start, and where there was none, or V8
// rejected it (another Node, other V8 flags, a changed file), compiled from source as before and its cache
// written a few seconds later, once start-up has compiled what it runs, and again at exit. The build writes it
// from a short run that answers health and an agent's first read (scripts/train-code-cache.mjs), so every start
// reads the code of those paths. Every failure falls back to compiling.
// Not used from source (tsx), with --enable-source-maps (Node maps only what it compiles itself), or with
// URLBRIDGE_CODE_CACHE=0. The cache sits beside the code (dist/server/.v8-cache/), writable only by whoever
// can change the code itself; entries are named after the file's size and mtime and replaced by rename.
import fs from "node:fs";
import Module from "node:module";
import path from "node:path";
import vm from "node:vm";

/** After start-up has compiled what it runs: the cache then holds those functions too, not just the top level. */
export const CODE_CACHE_WRITE_DELAY_MS = 3000;
export const CODE_CACHE_DIR = ".v8-cache";

interface CompilingModule {
  exports: unknown;
  filename: string;
}
type Compile = (this: CompilingModule, content: string, filename: string) => unknown;

export interface CodeCacheOptions {
  /** The folder whose .js files are cached (dist/server). */
  dir: string;
  env?: NodeJS.ProcessEnv;
  writeDelayMs?: number;
}

/** Where the cached bytecode of one file goes: per Node version and architecture, per file size and mtime. */
export function cacheFileOf(dir: string, filename: string, stat: fs.Stats): string {
  const version = `${process.version}-${process.arch}`;
  return path.join(
    dir,
    CODE_CACHE_DIR,
    version,
    `${path.basename(filename)}.${stat.size}-${Math.trunc(stat.mtimeMs)}.bin`,
  );
}

function readCache(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Writes the cache beside the code by rename, so a concurrent start reads a whole file or none; drops older entries of the file. */
function writeCache(file: string, data: Buffer): void {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, data);
    fs.renameSync(temp, file);
    const prefix = `${path.basename(file).split(".").slice(0, -2).join(".")}.`;
    for (const name of fs.readdirSync(path.dirname(file))) {
      if (name.startsWith(prefix) && name !== path.basename(file) && !name.endsWith(".tmp"))
        fs.rmSync(path.join(path.dirname(file), name), { force: true });
    }
  } catch {
    // A read-only install or a full disk: the next start compiles from source, as without a cache.
  }
}

let installed = false;

/** Installs the cache for `dir` once per process; false when it stays off (see the file's header). */
export function installCodeCache({
  dir,
  env = process.env,
  writeDelayMs = CODE_CACHE_WRITE_DELAY_MS,
}: CodeCacheOptions): boolean {
  if (installed || env.URLBRIDGE_CODE_CACHE === "0" || process.sourceMapsEnabled) return false;
  const proto = Module.prototype as unknown as { _compile: Compile };
  const original = proto._compile;
  const pending: Array<{ script: vm.Script; file: string }> = [];
  proto._compile = function compileWithCache(content, filename) {
    if (path.dirname(filename) !== dir || !filename.endsWith(".js")) {
      return original.call(this, content, filename);
    }
    let script: vm.Script;
    let file: string;
    try {
      file = cacheFileOf(dir, filename, fs.statSync(filename));
      const cachedData = readCache(file);
      // No importModuleDynamically: Node 20 loses it for a script compiled from cachedData, so the bundle has
      // no import() (output.dynamicImportInCjs: false), and one added later fails on every start alike.
      script = new vm.Script(Module.wrap(content), { filename, ...(cachedData ? { cachedData } : {}) });
      if (!cachedData || script.cachedDataRejected) pending.push({ script, file });
    } catch {
      return original.call(this, content, filename);
    }
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    const require = Module.createRequire(filename);
    return wrapper.call(this.exports, this.exports, require, this, filename, path.dirname(filename));
  };
  installed = true;
  const flush = () => {
    for (const { script, file } of pending) writeCache(file, script.createCachedData());
  };
  setTimeout(flush, writeDelayMs).unref();
  // And again as it exits, with what the run compiled since (a short run such as scripts/train-code-cache.mjs: the
  // first calls' code too), or for the first time when it stopped sooner (a probe), so its next start has it.
  process.once("exit", flush);
  return true;
}
