// What the edit-timeline scripts share: a built server (any build's entry, with node options) in its own process,
// a project holding one flip file, a session, and one sequential `/e` of that file on a keep-alive connection.
import fs from "node:fs";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import { createControlPost, makeBenchDir, spawnServer } from "../bridge.js";
import { writeFlipFile } from "../flip-file.js";
import { createBenchClient, stopChild } from "../http.js";
import { encodeQueryValue, encodeUrlText } from "../../../server/url-grammar/encode.js";

export interface EditServer {
  child: ChildProcess;
  /** One /e flipping the file's `value A` / `value B` line, run= n; throws unless it answers ok. */
  edit(n: number): Promise<void>;
  /** Stops the server and removes its state and project folders. */
  close(): Promise<void>;
}

export async function startEditServer(
  label: string,
  options: { entry?: string; nodeArgs?: string[]; terminal?: boolean } = {},
): Promise<EditServer> {
  const projectDir = makeBenchDir(`${label}-project`);
  writeFlipFile(path.join(projectDir, "edit.txt"));
  if (process.getuid?.() === 0)
    for (const name of [".", ...fs.readdirSync(projectDir)]) fs.chownSync(path.join(projectDir, name), 1000, 1000);
  const stateDir = makeBenchDir(`${label}-state`);
  const { child, urls } = spawnServer(stateDir, {}, options.nodeArgs ?? [], options.entry);
  const api = createControlPost((await urls).control);
  const project = await api("/api/projects", {
    name: "bench",
    root: projectDir,
    permissions: { write: true, terminal: options.terminal ?? false },
  });
  const session = await api("/api/sessions", { projectId: project.id });
  const bases = ((await (await fetch(session.initUrl!)).json()) as { bases: { m: string } }).bases;
  const client = createBenchClient(1);
  let current = "A";
  return {
    child,
    async edit(n) {
      const next = current === "A" ? "B" : "A";
      const url = `${bases.m}/e?path=edit.txt&old=${encodeQueryValue(`value ${current}`)}&run=${n}&raw=${encodeUrlText(`value ${next}`)}`;
      const body = JSON.parse((await client.get(url)).toString("utf8")) as { ok?: boolean };
      if (!body.ok) throw new Error(JSON.stringify(body));
      current = next;
    },
    async close() {
      await stopChild(child);
      for (const dir of [stateDir, projectDir]) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
