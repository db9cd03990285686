// @modelcontextprotocol/server-filesystem over stdio through the official SDK client, as scripts/bench/mcp.ts
// drives it, for suites that compare one of its tools with a urlbridge route in the same run.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const FILESYSTEM_SERVER = path.join(
  REPO_ROOT,
  "node_modules",
  "@modelcontextprotocol",
  "server-filesystem",
  "dist",
  "index.js",
);

export interface FilesystemServer {
  /** Calls a tool; a tool error (isError) throws with its content. */
  call(name: string, args: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

/** Starts the filesystem server on `root` (its one allowed directory) and connects the SDK client to it. */
export async function startFilesystemServer(root: string): Promise<FilesystemServer> {
  const client = new Client({ name: "urlbridge-bench-filesystem", version: "0.0.0" });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [FILESYSTEM_SERVER, root], stderr: "inherit" }),
  );
  return {
    call: async (name, args) => {
      const result = await client.callTool({ name, arguments: args });
      if (result.isError) throw new Error(`filesystem ${name} failed: ${JSON.stringify(result.content).slice(0, 300)}`);
    },
    close: () => client.close(),
  };
}
