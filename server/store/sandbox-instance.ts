// The label that tells this appliance's sandbox containers from another's on the same Docker engine (issue 28,
// item 8): without URLBRIDGE_SANDBOX_INSTANCE, each state directory gets its own, made once and kept in settings,
// so two appliances on one engine never remove each other's containers at start or stop.
import { randomBytes } from "node:crypto";
import type { SettingQueries } from "./settings.js";

export const SANDBOX_INSTANCE_SETTING = "sandbox_instance";

/** The configured name, or this state's own (created on first use): "ub-" and 10 hex digits, a valid Docker label. */
export function sandboxInstanceOf(settings: SettingQueries, configured: string | undefined): string {
  if (configured !== undefined) return configured;
  const kept = settings.get(SANDBOX_INSTANCE_SETTING);
  if (kept !== undefined) return kept;
  const made = `ub-${randomBytes(5).toString("hex")}`;
  settings.set(SANDBOX_INSTANCE_SETTING, made);
  return made;
}
