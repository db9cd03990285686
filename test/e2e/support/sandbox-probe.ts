// What is inside a bridge's sandbox containers, read through the Docker engine (never through /x): the
// containers of one project, and the command lines running in its container. Shared by the container e2e suites.
import { Writable } from "node:stream";
import type Dockerode from "dockerode";
import { LABEL_INSTANCE, LABEL_PROJECT } from "../../../server/sandbox/container/spec.js";

export function createSandboxProbe(docker: Dockerode, instance: string) {
  const containersOf = (projectId: string) =>
    docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_INSTANCE}=${instance}`, `${LABEL_PROJECT}=${projectId}`] },
    });

  async function listProcesses(container: Dockerode.Container): Promise<string[]> {
    const exec = await container.exec({
      Cmd: ["sh", "-c", "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done"],
      AttachStdout: true,
      AttachStderr: false,
    });
    const stream = await exec.start({ hijack: true, stdin: false });
    const chunks: Buffer[] = [];
    const out = new Writable({ write: (chunk: Buffer, _encoding, done) => (chunks.push(chunk), done()) });
    docker.modem.demuxStream(stream, out, new Writable({ write: (_chunk, _encoding, done) => done() }));
    await new Promise((resolve) => (stream.on("end", resolve), stream.on("close", resolve)));
    return Buffer.concat(chunks)
      .toString("utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
  }

  /** Command lines in the project's container; none when it is not running, ["(restarting)"] while it restarts. */
  async function processesIn(projectId: string): Promise<string[]> {
    const [info] = await containersOf(projectId);
    if (!info || info.State !== "running") return [];
    try {
      return await listProcesses(docker.getContainer(info.Id));
    } catch (error) {
      // 409 "is restarting", or 500 "is not running" in the instant between the restart's stop and start.
      if ([409, 500].includes((error as { statusCode?: number }).statusCode ?? 0)) return ["(restarting)"];
      throw error;
    }
  }

  return { containersOf, processesIn };
}

/** Polls probe every 250 ms until done(value) or the attempts run out; returns the last value. */
export async function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean, attempts = 60): Promise<T> {
  let value = await probe();
  for (let i = 0; i < attempts && !done(value); i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    value = await probe();
  }
  return value;
}
