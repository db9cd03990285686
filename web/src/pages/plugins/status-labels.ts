// Words and colours for a plugin's status and connection, so the table says what each state means to an operator.
import type { PluginStatus } from "../../api/types";

type State = PluginStatus["state"];
type Connection = NonNullable<PluginStatus["connection"]>;

const STATE_LABELS: Record<State, string> = {
  ready: "ready",
  disconnected: "disconnected",
  "not-running": "not running",
  "needs-auth": "needs auth",
  "instance-changed": "instance changed",
  disabled: "disabled",
  error: "error",
  "not-configured": "not configured",
};

export const stateLabel = (state: State): string => STATE_LABELS[state] ?? state;

/** Green when usable, grey when the operator has not set it up (a choice, not a fault), red when a call would fail. */
export const stateTone = (state: State): "ok" | "idle" | "fail" =>
  state === "ready" ? "ok" : state === "not-configured" ? "idle" : "fail";

/** What the server asks for; not known until something answered at the URL. */
export function authLabel(state: State, auth: Connection["auth"]): string {
  if (auth === undefined || state === "not-running" || state === "disconnected")
    return "not known (nothing answered yet)";
  return auth === "basic" ? "a password (HTTP Basic)" : "no password";
}

export const credentialsLabel = (credentials: Connection["credentials"]): string =>
  credentials === "configured" ? "password configured" : "no password configured";
