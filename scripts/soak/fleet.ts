// The soak's bridge: the built server in its own process (as `npm start` runs it), with one project and one
// write+terminal session per simulated agent, each project a temp folder with a few files to read and search.
import fs from "node:fs";
import path from "node:path";
import { createControlPost, makeBenchDir, spawnServer } from "../bench/bridge.js";
import { stopChild } from "../bench/http.js";

export interface SoakSession {
  index: number;
  root: string;
  r: string;
  m: string;
}

export interface Fleet {
  pid: number;
  stateDir: string;
  controlUrl: string;
  sessions: SoakSession[];
  close(): Promise<void>;
}

const SEED_FILES = ["src/app.ts", "src/util.ts", "README.md"];

function seedProject(root: string, index: number): void {
  fs.mkdirSync(path.join(root, "src"), { recursive: true });
  for (const [i, rel] of SEED_FILES.entries()) {
    const lines = Array.from(
      { length: 120 },
      (_, n) => `// project ${index} file ${i} line ${n}: export const value${n} = ${n * (i + 1)};`,
    );
    fs.writeFileSync(path.join(root, rel), `${lines.join("\n")}\n`);
  }
  // As root the sandboxed terminal runs as the project's owner; give the folder to uid 1000 like a real host user.
  if (process.getuid?.() === 0) {
    for (const p of [root, path.join(root, "src"), ...SEED_FILES.map((f) => path.join(root, f))])
      fs.chownSync(p, 1000, 1000);
  }
}

export interface FleetOptions {
  /** Arguments to the bridge's node (e.g. --cpu-prof, the loop probe's --import). */
  nodeArgs?: string[];
  /** Added to the bridge's environment. */
  env?: Record<string, string>;
  /** Another build's dist/server/main.js. */
  entry?: string | undefined;
}

/** The bridge and its sessions. */
export async function startFleet(sessions: number, options: FleetOptions = {}): Promise<Fleet> {
  const stateDir = makeBenchDir("soak-state");
  const roots: string[] = [];
  const entry = options.entry === undefined ? undefined : path.resolve(options.entry);
  const { child, urls } = spawnServer(stateDir, options.env ?? {}, options.nodeArgs ?? [], entry);
  const close = async () => {
    await stopChild(child);
    for (const dir of [stateDir, ...roots]) fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const { control } = await urls;
    const api = createControlPost(control);
    const out: SoakSession[] = [];
    for (let i = 0; i < sessions; i++) {
      const root = makeBenchDir(`soak-project-${i}`);
      roots.push(root);
      seedProject(root, i);
      const project = await api("/api/projects", {
        name: `soak-${i}`,
        root,
        permissions: { write: true, terminal: true },
      });
      const session = await api("/api/sessions", { projectId: project.id });
      const init = (await (await fetch(session.initUrl!)).json()) as { bases: { r: string; m: string } };
      out.push({ index: i, root, r: init.bases.r, m: init.bases.m });
    }
    return { pid: child.pid!, stateDir, controlUrl: control, sessions: out, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export { SEED_FILES };
