// A real bridge for a benchmark: temp state dir, one project on a given root, one session, silent logs.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startBridge } from "../../server/bridge.js";
import { loadConfig } from "../../server/config.js";

const OPERATOR_TOKEN = "bench-operator-token-0123456789";

export interface BenchBridge {
  bases: { r: string; m?: string };
  close(): Promise<void>;
}

export function makeBenchDir(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `urlbridge-bench-${prefix}-`)));
}

export async function startBenchBridge(root: string, env: Record<string, string> = {}): Promise<BenchBridge> {
  const stateDir = makeBenchDir("state");
  const bridge = await startBridge(
    loadConfig({
      URLBRIDGE_STATE_DIR: stateDir,
      URLBRIDGE_CONTROL_PORT: "0",
      URLBRIDGE_DATA_PORT: "0",
      URLBRIDGE_OPERATOR_TOKEN: OPERATOR_TOKEN,
      URLBRIDGE_LOG_LEVEL: "silent",
      ...env,
    }),
  );
  const api = async (route: string, body: unknown) => {
    const res = await fetch(`${bridge.controlUrl}${route}`, {
      method: "POST",
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`${route} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  };
  try {
    const project = await api("/api/projects", { name: "bench", root, permissions: { write: false, terminal: false } });
    const session = await api("/api/sessions", { projectId: project.id });
    const { bases } = (await (await fetch(session.initUrl!)).json()) as { bases: BenchBridge["bases"] };
    return {
      bases,
      async close() {
        await bridge.close();
        fs.rmSync(stateDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await bridge.close();
    throw error;
  }
}
