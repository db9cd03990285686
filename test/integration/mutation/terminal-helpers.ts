// Shared by the /x integration tests: follow a mutation's poll URL to its final record, and wait for a condition.
import { agentGet } from "../../helpers/bridge.js";

export type Body = Record<string, unknown> & { ok: boolean };

/** Polls are bounded so a broken journal fails the test instead of hanging it. */
const MAX_POLLS = 120;

/** GETs url and, while the intent is pending or running, follows its exact poll URL. */
export async function settle(url: string): Promise<Body> {
  let body = await agentGet<Body>(url);
  for (let i = 0; i < MAX_POLLS && (body.state === "pending" || body.state === "running"); i++) {
    body = await agentGet<Body>(String(body.poll));
  }
  return body;
}

export async function waitUntil(check: () => boolean, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return check();
}
