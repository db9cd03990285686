// The README's Docker commands, run where that is safe and checked against Docker Compose itself: each docker
// block runs line by line in a scratch copy of compose.yaml and deploy/, with `docker compose up ...` resolved
// by `docker compose config` (what up would start, with the .env the block wrote), and the "No tunnel yet" box
// quotes exactly what a failed cloudflared pull prints on this machine (no image registry is reachable here).
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { commandsOf, dockerProblem, REPO_ROOT, shellBlocks } from "../docs/doc-commands.js";

const run = promisify(execFile);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-newcomer-readme-"));
const PROJECT = "urlbridge-readme-check";

interface Model {
  services: Record<
    string,
    { ports?: Array<{ host_ip?: string; target: number }>; environment?: Record<string, string | null> }
  >;
}

/** docker compose in the scratch folder, as an operator's shell there would run it (its .env, no URLBRIDGE_* of ours). */
async function compose(args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(URLBRIDGE_|COMPOSE_|TUNNEL_)/.test(k)),
  );
  try {
    const { stdout, stderr } = await run("docker", ["compose", "-p", PROJECT, ...args], { cwd: scratch, env });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; code?: number };
    return { stdout: e.stdout ?? "", stderr: e.stderr ?? "", code: e.code ?? 1 };
  }
}

const readEnv = () => fs.readFileSync(path.join(scratch, ".env"), "utf8");

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe("README docker commands", () => {
  fs.copyFileSync(path.join(REPO_ROOT, "compose.yaml"), path.join(scratch, "compose.yaml"));
  fs.cpSync(path.join(REPO_ROOT, "deploy"), path.join(scratch, "deploy"), { recursive: true });
  const blocks = shellBlocks("README.md").filter((b) => b.mode === "docker");

  it.each(blocks.map((b) => [`README.md:${b.line}`, b] as const))(
    "%s runs (up resolved by docker compose config)",
    async (_at, block) => {
      for (const command of commandsOf(block.text)) {
        if (!command.startsWith("docker ")) {
          await run("bash", ["-euo", "pipefail", "-c", command], { cwd: scratch });
          continue;
        }
        expect(dockerProblem(command)).toBeUndefined();
        const words = command.split(/\s+/);
        if (words[2] !== "up") continue;
        const services = words.slice(3).filter((w) => !w.startsWith("-"));
        const config = await compose(["config", "--format", "json"]);
        expect(config.stderr).not.toMatch(/error/i);
        const model = JSON.parse(config.stdout) as Model;
        if (services.length > 0) {
          for (const s of services) expect(Object.keys(model.services)).toContain(s);
          continue;
        }
        // Plain `up`: the bridge and the tunnel, or the bridge alone in the no-tunnel mode the .env line names.
        const noTunnel = fs.existsSync(path.join(scratch, ".env")) && /local-data-plane/.test(readEnv());
        expect(Object.keys(model.services).sort()).toEqual(noTunnel ? ["bridge"] : ["bridge", "tunnel"]);
      }
    },
  );

  it("keeps the no-tunnel mode for every later plain `docker compose up -d` once COMPOSE_FILE is in .env", async () => {
    // The blocks above ran in order: the second one wrote the COMPOSE_FILE line.
    expect(readEnv()).toContain("COMPOSE_FILE=compose.yaml:deploy/compose.local-data-plane.yaml");
    const model = JSON.parse((await compose(["config", "--format", "json"])).stdout) as Model;
    expect(Object.keys(model.services)).toEqual(["bridge"]);
    const { bridge } = model.services;
    expect(bridge!.ports!.map((p) => [p.host_ip, p.target])).toEqual([
      ["127.0.0.1", 47433],
      ["127.0.0.1", 47432],
    ]);
    expect(bridge!.environment!.URLBRIDGE_DATA_PLANE_ON_HOST).toBe("1");
    expect(bridge!.environment!.URLBRIDGE_TUNNEL_METRICS).toBe("");
    fs.rmSync(path.join(scratch, ".env"));
    const plain = (JSON.parse((await compose(["config", "--format", "json", "bridge"])).stdout) as Model).services
      .bridge!;
    expect(plain.ports!.map((p) => p.target)).toEqual([47433]);
  });

  it("quotes the error a failed tunnel pull prints", async () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
    const quoted = /> ```text\n((?:> .*\n)+?)> ```/
      .exec(readme)?.[1]
      ?.split("\n")
      .map((l) => l.replace(/^> ?/, "").trimEnd())
      .filter(Boolean);
    expect(quoted?.[0]).toBe(" tunnel Pulling".trimEnd());
    const pulled = await compose(["pull", "tunnel"]);
    if (pulled.code === 0) {
      console.warn(
        "docker compose pull tunnel succeeded: a registry is reachable here, so the quoted failure cannot be compared",
      );
      return;
    }
    // Only the resolver's address may differ from the machine the README was written on.
    const resolver = (lines: string[]) => lines.map((l) => l.replace(/ on [\d.:[\]a-f]+:53:/g, " on <resolver>:53:"));
    const printed = `${pulled.stdout}${pulled.stderr}`
      .split("\n")
      .map((l) => l.trimEnd())
      .filter(Boolean);
    expect(resolver(printed)).toEqual(resolver(quoted!));
  });
});
