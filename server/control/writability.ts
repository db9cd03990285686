// Whether the identities that will write in a project root can: the bridge itself (the file tools) and, when it
// is another user, the identity terminal commands run as (server/sandbox/identity.ts). Each one creates a probe
// file and replaces it by rename, as atomic writes do, so a folder that only looks writable (a read-only mount,
// an ACL, a user namespace) is caught too. Used when write or terminal is granted (api.ts).
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

export type Writer = "bridge" | "terminal";

export type WritabilityResult = { ok: true } | { ok: false; writer: Writer; identity: Identity; reason: string };

export interface WritabilityOptions {
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

/** Probes the root as every identity that will write there; the first one that cannot is reported. */
export async function checkWritable(root: string, options: WritabilityOptions): Promise<WritabilityResult> {
  const probe = path.join(root, `${PROBE_PREFIX}${randomBytes(6).toString("hex")}`);
  const bridgeProblem = probeAsBridge(root, probe);
  if (bridgeProblem) return { ok: false, writer: "bridge", identity: self(), reason: bridgeProblem };
  const identity = options.terminalIdentity;
  if (!options.terminal || !identity || (identity.uid === self().uid && identity.gid === self().gid))
    return { ok: true };
  const terminalProblem = await probeAsIdentity(probe, identity);
  return terminalProblem ? { ok: false, writer: "terminal", identity, reason: terminalProblem } : { ok: true };
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
  const who =
    result.writer === "terminal"
      ? `terminal commands run as uid ${result.identity.uid}, which cannot create and replace a file there`
      : `the bridge (uid ${result.identity.uid}) cannot create and replace a file there`;
  const shown = hostPathOf(root, inAppliance);
  const where =
    inAppliance && shown !== root ? ` (${root} in the container; the folder under URLBRIDGE_PROJECTS on the host)` : "";
  const fix = /read-only mount/.test(result.reason)
    ? "mount it read-write"
    : `run \`sudo chown -R ${result.identity.uid}:${result.identity.gid} ${shown}\` on the host${where}`;
  return `Cannot grant write or terminal on ${root}: ${who} (${result.reason}). To fix it, ${fix}, then try again; or grant read only.`;
}
