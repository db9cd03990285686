// Who agent-made things belong to: the identity terminal commands run as and that new files are given,
// when the bridge itself runs as root (in the appliance, or an operator's root service). Otherwise the
// bridge cannot change identity, and everything stays its own.
import fs from "node:fs";

export interface Identity {
  uid: number;
  gid: number;
}

/** True when this process may change the identity of its children and the owner of files it creates. */
export function bridgeIsRoot(): boolean {
  return typeof process.geteuid === "function" && process.geteuid() === 0;
}

/**
 * The project owner's identity when the bridge is root: the owner of the project root directory, unless that
 * is root itself, in which case the configured fallback (URLBRIDGE_AGENT_UID/GID, default 1000). Never uid 0.
 * Undefined when the bridge is not root: then children run as the bridge's own user and files stay its own.
 */
export function agentIdentity(rootOwner: Identity, fallback: Identity): Identity | undefined {
  if (!bridgeIsRoot()) return undefined;
  if (rootOwner.uid !== 0) return { uid: rootOwner.uid, gid: rootOwner.gid === 0 ? fallback.gid : rootOwner.gid };
  return { ...fallback };
}

/** agentIdentity for the owner of `root` as it is on disk now (stat follows the root's own symlink, if any). */
export function ownerIdentityOf(root: string, fallback: Identity): Identity | undefined {
  const owner = fs.statSync(root);
  return agentIdentity({ uid: owner.uid, gid: owner.gid }, fallback);
}
