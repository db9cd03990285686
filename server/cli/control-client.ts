// Talks to the running control plane over HTTP with the operator token as a bearer, finding both the
// way the server does: URLBRIDGE_CONTROL_HOST/PORT and URLBRIDGE_OPERATOR_TOKEN or <state>/operator-token.
import type { Config } from "../config.js";
import type { ApiErrorBody } from "../control/api-types.js";
import { operatorTokenPath, readOperatorTokenFile } from "../control/operator-token.js";
import { runningInAppliance } from "../control/session-mcp.js";
import { CliError } from "./cli-error.js";
import { startCommand } from "./invocation.js";

export const CONTROL_REQUEST_TIMEOUT_MS = 15_000;

export interface OperatorTokenLocation {
  source: "env" | "file";
  file: string | undefined;
  token: string | undefined;
}

/** Where the operator token lives and, if readable, its value. */
export function locateOperatorToken(config: Config): OperatorTokenLocation {
  if (config.operatorToken) return { source: "env", file: undefined, token: config.operatorToken };
  const file = operatorTokenPath(config.stateDir);
  try {
    return { source: "file", file, token: readOperatorTokenFile(config.stateDir) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(
      `cannot read the operator token at ${file} (${code ?? "error"}); run as the user that runs urlbridge`,
    );
  }
}

/** The control plane URL for a client on this machine: a wildcard bind is reached through loopback. */
export function controlUrl(config: Config): string {
  const host = config.control.host;
  const reachable =
    host === "0.0.0.0" || host === "::" || host === "[::]" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  return `http://${reachable}:${config.control.port}`;
}

export interface ControlClient {
  url: string;
  request<T>(method: string, path: string, body?: unknown): Promise<T>;
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === "ECONNREFUSED") return "connection refused";
  if ((error as Error).name === "TimeoutError") return `no answer within ${CONTROL_REQUEST_TIMEOUT_MS / 1000} s`;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

export function createControlClient(config: Config): ControlClient {
  const url = controlUrl(config);
  const located = locateOperatorToken(config);
  const token = located.token;
  if (!token) {
    throw new CliError(
      `no operator token: URLBRIDGE_OPERATOR_TOKEN is not set and ${located.file} does not exist yet; start the server once (${startCommand({ inAppliance: runningInAppliance(config.stateDir) })})`,
    );
  }
  return {
    url,
    async request<T>(method: string, path: string, body?: unknown): Promise<T> {
      let res: Response;
      try {
        res = await fetch(`${url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(CONTROL_REQUEST_TIMEOUT_MS),
        });
      } catch (error) {
        throw new CliError(
          `cannot reach the control plane at ${url} (${describeNetworkError(error)}); is urlbridge running? Start it with ${startCommand({ inAppliance: runningInAppliance(config.stateDir) })}`,
        );
      }
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      if (res.ok) return parsed as T;
      const error = (parsed as ApiErrorBody | undefined)?.error;
      if (!error)
        throw new CliError(
          `the control plane at ${url} answered HTTP ${res.status} without an error body; is something else listening there?`,
        );
      const hint =
        res.status === 401
          ? ` (the CLI used the token from ${located.source === "env" ? "URLBRIDGE_OPERATOR_TOKEN" : located.file})`
          : "";
      // A refused worktree merge names the paths at fault (conflicts, uncommitted files) beside its error: one line.
      const paths = (parsed as { paths?: unknown }).paths;
      const listed = Array.isArray(paths) && paths.length > 0 ? ` (paths: ${paths.map(String).join(", ")})` : "";
      throw new CliError(`${error.code}: ${error.message}${hint}${listed}`);
    },
  };
}
