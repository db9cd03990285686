// Helpers shared by the mutation integration tests: exact URLs built with the reference encoder, and
// byte-level snapshots of a project tree.
import fs from "node:fs";
import path from "node:path";
import { encodeQueryValue, encodeUrlText } from "../../../server/url-grammar/encode.js";
import { writeAsAgent } from "../../helpers/bridge.js";

/** base + /route?k=v...&raw=<content>, every value encoded the way the bridge itself encodes URLs. */
export function url(base: string, route: string, params: Array<[string, string | number]> = [], raw?: string): string {
  const parts = params.map(([k, v]) => `${k}=${encodeQueryValue(String(v))}`);
  if (raw !== undefined) parts.push(`raw=${encodeUrlText(raw)}`);
  return `${base}/${route}${parts.length > 0 ? `?${parts.join("&")}` : ""}`;
}

export interface TreeEntry {
  kind: "file" | "dir";
  mode: number;
  content?: string;
}

/**
 * Every file (bytes as base64, mode) and directory under root, keyed by relative path. Safe to call while a
 * bridge is writing: an entry renamed or removed between readdir and its read is simply not in the snapshot.
 */
export function snapshotTree(root: string): Record<string, TreeEntry> {
  const out: Record<string, TreeEntry> = {};
  const vanished = (error: unknown) => (error as NodeJS.ErrnoException).code === "ENOENT";
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const rel = path.relative(root, full);
      try {
        const info = fs.lstatSync(full);
        if (info.isDirectory()) {
          out[rel] = { kind: "dir", mode: info.mode & 0o7777 };
          walk(full);
        } else {
          out[rel] = { kind: "file", mode: info.mode & 0o7777, content: fs.readFileSync(full).toString("base64") };
        }
      } catch (error) {
        if (!vanished(error)) throw error;
      }
    }
  };
  walk(root);
  return out;
}

/** Writes fixture files (and their folders) under root as the agent's own (writeAsAgent). */
export function writeFiles(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) writeAsAgent(path.join(root, rel), content);
}

export function patchText(...lines: string[]): string {
  return ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");
}
