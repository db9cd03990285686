// Whether the identities that will write in a project root can: the bridge itself (it writes the files), the agent's
// identity file tools decide with (server/sandbox/agent-access.ts: a root bridge's DAC override is not the agent's)
// and the identity terminal commands run as (server/sandbox/identity.ts), when they are other users. Each one
// creates a probe file and replaces it by rename, as atomic writes do, so a folder that only looks writable (a
// read-only mount, an ACL, a user namespace) is caught too. Used when write or terminal is granted (api.ts).
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Identity } from "../sandbox/identity.js";

/** A probe is two empty files; a stuck filesystem must not hold the control request for long. */
const PROBE_TIMEOUT_MS = 5000;
const PROBE_PREFIX = ".urlbridge-write-probe-";

/**
 * Runs as the terminal's identity, with the probe's path as $1: create it, create a second file, rename that
 * over the first (replace), remove it. `set -e` stops at the first refusal and the exit status says so.
 */
const PROBE_SCRIPT = 'set -e; : > "$1"; : > "$1.new"; mv -f "$1.new" "$1"; rm -f "$1"';

/** bridge: the process itself; agent: the identity of file tools (and of terminal commands when both are granted). */
export type Writer = "bridge" | "agent" | "terminal";

export type WritabilityResult =
  { ok: true } | { ok: false; writer: Writer; identity: Identity; reason: string; terminal: boolean };

export interface WritabilityOptions {
  /** The agent identity file tools decide with (agentIdentity of the root); undefined when it is the bridge itself. */
  agentIdentity: Identity | undefined;
  /** Probe the agent identity when write is granted. */
  write: boolean;
  /** Which identity terminal commands of this root run as; undefined when they run as the bridge itself. */
  terminalIdentity: Identity | undefined;
  /** Only probe the terminal identity when terminal commands are granted. */
  terminal: boolean;
}

const self = (): Identity => ({ uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 });

function probeAsBridge(root: string, probe: string): string | undefined {
  try {
    fs.writeFileSync(probe, "", { flag: "wx" });
    fs.writeFileSync(`${probe}.new`, "", { flag: "wx" });
    fs.renameSync(`${probe}.new`, probe);
    return undefined;
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    return e.code === "EROFS"
      ? `${root} is on a read-only mount`
      : `${e.code ?? "error"}: ${e.message.replace(/^[A-Z]+: /, "")}`;
  } finally {
    for (const f of [probe, `${probe}.new`]) fs.rmSync(f, { force: true });
  }
}

function probeAsIdentity(probe: string, identity: Identity): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      "/bin/sh",
      ["-c", PROBE_SCRIPT, "urlbridge-write-probe", probe],
      { uid: identity.uid, gid: identity.gid, env: { PATH: "/usr/bin:/bin" }, cwd: "/", timeout: PROBE_TIMEOUT_MS },
      (error, _stdout, stderr) => {
        for (const f of [probe, `${probe}.new`]) fs.rmSync(f, { force: true });
        if (!error) return resolve(undefined);
        const said = stderr
          .trim()
          .split("\n")
          .pop()
          ?.replace(/^[^:]*: (?:\d+: )?/, "");
        resolve(said || error.message);
      },
    );
  });
}

const same = (a: Identity, b: Identity) => a.uid === b.uid && a.gid === b.gid;

/** Probes the root as every identity that will write there; the first one that cannot is reported. */
export async function checkWritable(root: string, options: WritabilityOptions): Promise<WritabilityResult> {
  const probe = path.join(root, `${PROBE_PREFIX}${randomBytes(6).toString("hex")}`);
  const { terminal } = options;
  const bridgeProblem = probeAsBridge(root, probe);
  if (bridgeProblem) return { ok: false, writer: "bridge", identity: self(), reason: bridgeProblem, terminal };
  const writers: Array<{ writer: Writer; identity: Identity }> = [];
  if (options.write && options.agentIdentity) writers.push({ writer: "agent", identity: options.agentIdentity });
  const t = options.terminalIdentity;
  if (terminal && t && !writers.some((w) => same(w.identity, t))) writers.push({ writer: "terminal", identity: t });
  for (const { writer, identity } of writers) {
    if (same(identity, self())) continue;
    const problem = await probeAsIdentity(probe, identity);
    if (problem) return { ok: false, writer, identity, reason: problem, terminal };
  }
  return { ok: true };
}

/**
 * The folder as the operator names it on the host: in the appliance /projects is the host's
 * URLBRIDGE_PROJECTS (./projects by default), so /projects/demo is projects/demo beside compose.yaml.
 */
export function hostPathOf(root: string, inAppliance: boolean): string {
  if (inAppliance && (root === "/projects" || root.startsWith("/projects/"))) return root.slice(1);
  return root;
}

/** The operator-facing refusal: who cannot write, why, and the exact command that fixes it. */
export function unwritableMessage(
  root: string,
  result: Exclude<WritabilityResult, { ok: true }>,
  inAppliance: boolean,
): string {
  const uid = result.identity.uid;
  const who =
    result.writer === "bridge"
      ? `the bridge (uid ${uid}) cannot create and replace a file there`
      : result.writer === "terminal"
        ? `terminal commands run as uid ${uid}, which cannot create and replace a file there`
        : `${result.terminal ? "file tools and terminal commands act" : "file tools act"} as uid ${uid} (the agent), which cannot create and replace a file there`;
  const shown = hostPathOf(root, inAppliance);
  const where =
    inAppliance && shown !== root ? ` (${root} in the container; the folder under URLBRIDGE_PROJECTS on the host)` : "";
  const fix = /read-only mount/.test(result.reason)
    ? "mount it read-write"
    : `run \`sudo chown -R ${result.identity.uid}:${result.identity.gid} ${shown}\` on the host${where}`;
  return `Cannot grant write or terminal on ${root}: ${who} (${result.reason}). To fix it, ${fix}, then try again; or grant read only.`;
}
