// The one way the UI talks to the control API: same-origin fetch with the login cookie, JSON in and out,
// every failure turned into an ApiError that carries the server's code and a sentence for the operator.
import { reactive } from "vue";
import type { ApiErrorBody } from "./types";

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The whole error body, for the fields some errors carry beside {error} (a refused revert's conflicts). */
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/** unknown until the first /api/whoami answers; out after any 401. */
export const auth = reactive<{ state: "unknown" | "in" | "out" }>({ state: "unknown" });

function isErrorBody(value: unknown): value is ApiErrorBody {
  const error = (value as ApiErrorBody | null)?.error;
  return typeof error?.code === "string" && typeof error.message === "string";
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers:
        body === undefined
          ? { accept: "application/json" }
          : { accept: "application/json", "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "network_error", "Cannot reach the control plane. Is urlbridge still running?");
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (res.ok) return parsed as T;
  if (res.status === 401 && path !== "/api/login") auth.state = "out";
  if (isErrorBody(parsed)) throw new ApiError(res.status, parsed.error.code, parsed.error.message, parsed);
  throw new ApiError(res.status, `http_${res.status}`, `The control plane answered HTTP ${res.status}.`);
}

export const api = {
  get: <T>(path: string) => request<T>("GET", path),
  post: <T>(path: string, body?: unknown) => request<T>("POST", path, body ?? {}),
  put: <T>(path: string, body: unknown) => request<T>("PUT", path, body),
  patch: <T>(path: string, body: unknown) => request<T>("PATCH", path, body),
  del: (path: string) => request<void>("DELETE", path),
};

/** Query string from defined values only. */
export function query(params: Record<string, string | number | undefined>): string {
  const entries = Object.entries(params).filter(
    (e): e is [string, string | number] => e[1] !== undefined && e[1] !== "",
  );
  return entries.length === 0 ? "" : `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()}`;
}
