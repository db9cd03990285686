// Agent commands cannot connect to abstract Unix sockets (issue 28, item 7): such sockets (@name) carry no file
// permission, so before this any command reached any of them (@docker_cli_... answered). Where Landlock offers
// the abstract-socket scope (ABI 6, Linux 6.12) the launcher requests it, and /api/health says when it cannot.
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, launcherBinary, probeLauncher, type LaunchPlan } from "../../../server/sandbox/launcher.js";
import { giveToAgent, makeTempDir } from "../../helpers/bridge.js";

const binary = launcherBinary();
const probe = binary ? probeLauncher() : undefined;
const servers: net.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** An abstract socket the test listens on (outside any sandbox), like the bridge's or Docker's CLI's. */
async function listenAbstract(): Promise<{ name: string; accepted: () => number }> {
  const name = `\0urlbridge-test-${process.pid}-${servers.length}`;
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted += 1;
    // The command exits as soon as it connected; its end of the socket may reset first.
    socket.on("error", () => undefined);
    socket.end("hello\n");
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(name, resolve));
  return { name, accepted: () => accepted };
}

/** Runs node inside the launch plan, trying to connect to `name`; answers what it printed: "connected" or an error code. */
function connectFromSandbox(plan: LaunchPlan, name: string): Promise<string> {
  const script = `require("net").connect(${JSON.stringify(name)}).on("connect", () => { console.log("connected"); process.exit(0); }).on("error", (e) => { console.log(e.code); process.exit(3); });`;
  const child = spawn(plan.file, [...plan.args, "--", process.execPath, "-e", script], {
    cwd: plan.spawnCwd,
    env: { PATH: process.env.PATH ?? "", ...plan.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  return new Promise((resolve) => child.once("exit", () => resolve(out.trim() || `no output: ${err.trim()}`)));
}

function sandboxFor(project: string) {
  return createSandbox({
    config: {
      sandbox: "auto",
      scratchDir: makeTempDir("abstract-scratch"),
      stateDir: makeTempDir("abstract-state"),
      agentFallback: { uid: 1000, gid: 1000 },
    },
    codeDir: path.resolve("."),
    projectRoots: () => [project],
  });
}

describe.skipIf(!binary || !probe || probe.landlock === 0)("abstract Unix sockets from agent commands", () => {
  it("reports in the sandbox status whether commands are kept from abstract sockets", () => {
    const status = sandboxFor(makeTempDir("abstract-status")).status();
    expect(status.abstractSockets).toBe(probe!.landlock >= 6);
    if (probe!.landlock < 6) expect(status.warning).toMatch(/abstract Unix sockets/);
  });

  // This kernel's ABI decides: below 6 Landlock has no abstract-socket scope, and the status above says so.
  it.skipIf((probe?.landlock ?? 0) < 6)(
    "refuses a command's connect to an abstract socket opened outside its sandbox",
    async () => {
      const project = makeTempDir("abstract-project");
      giveToAgent(project);
      const target = await listenAbstract();
      const plan = sandboxFor(project).plan({ id: "p_abstract", root: project }, "", true)!;
      expect(plan.args).toContain("--scope-abstract-sockets");
      expect(await connectFromSandbox(plan, target.name)).toBe("EPERM");
      expect(target.accepted()).toBe(0);

      // The same plan without the scope connects: the refusal above is the scope's doing.
      const unscoped = { ...plan, args: plan.args.filter((a) => a !== "--scope-abstract-sockets") };
      expect(await connectFromSandbox(unscoped, target.name)).toBe("connected");
      expect(target.accepted()).toBe(1);
    },
  );
});
