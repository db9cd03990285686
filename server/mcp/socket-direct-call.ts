// tools/call on the MCP socket without the SDK's per-message dispatch, answering the bytes the SDK's path would:
// the SDK still serves every other line (socket-connection.ts hands each authenticated line here first). What is
// answered, and how, is direct-call.ts, shared with HTTP; this file knows the connection: its era and cancellations.
import { isPromise, type MaybePromise } from "../kernel/tool/runner.js";
import { DirectTools, type RpcId } from "./direct-call.js";
import type { McpDeps, McpScope } from "./server.js";

const SETTLED = Promise.resolve();

/** The first protocol revision of the 2026 era (the SDK's FIRST_MODERN_PROTOCOL_VERSION): its results differ. */
const FIRST_MODERN_REVISION = "2026-07-28";

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * Once a connection is pinned to a 2025-era revision (its initialize answered with one), a call direct-call.ts admits
 * is answered there; every other line (and every line before that initialize, or on a 2026-era connection) goes to
 * the SDK. A call whose id is still in flight goes to the SDK too, which answers the duplicate as it would.
 * test/integration/mcp/socket-direct-call.test.ts compares the bytes of both paths.
 */
export class DirectCalls {
  private readonly tools: DirectTools;
  private initializeIds = new Set<RpcId>();
  private legacy = false;
  private readonly cancelled = new Set<RpcId>();
  private readonly inflight = new Set<RpcId>();

  /** `scope`: the one the connection's server was built for (its tool listing; every call brings its own). */
  constructor(
    private readonly deps: McpDeps,
    scope: McpScope,
  ) {
    this.tools = new DirectTools(deps, scope);
  }

  /** An initialize request on its way to the SDK: its answer tells the era. */
  sawInitialize(id: RpcId): void {
    this.initializeIds.add(id);
  }

  /** Every message the SDK answers passes here; an initialize answered with a 2025-era revision pins the connection. */
  sawAnswer(message: { id?: unknown; result?: unknown }): void {
    if (this.initializeIds.size === 0 || (typeof message.id !== "string" && typeof message.id !== "number")) return;
    if (!this.initializeIds.delete(message.id)) return;
    const version = isPlainObject(message.result) ? message.result.protocolVersion : undefined;
    if (typeof version === "string" && version < FIRST_MODERN_REVISION) this.legacy = true;
  }

  /** Whether an initialize answered with a 2025-era revision pinned the connection to that era. */
  get pinnedToLegacy(): boolean {
    return this.legacy;
  }

  /** A notifications/cancelled for `id`: an answer not yet written is dropped, as the SDK drops it. */
  cancel(id: RpcId): void {
    if (this.inflight.has(id)) this.cancelled.add(id);
  }

  /**
   * Takes `value` when it is a plain tools/call answered as the SDK would: the answer line comes through `write`
   * (never when cancelled first), then `done` with its id once the run is over (cancelled or not). Answers the id
   * taken; undefined: nothing ran, the caller hands the message to the SDK.
   */
  take(
    value: unknown,
    scope: McpScope,
    write: (line: string) => Promise<void>,
    done: (id: RpcId) => void,
  ): RpcId | undefined {
    if (!this.legacy) return undefined;
    const call = this.tools.admit(value);
    if (!call || this.inflight.has(call.id)) return undefined;
    const { id } = call;
    this.inflight.add(id);
    const fail = (error: unknown) =>
      this.deps.log.debug("MCP socket direct call", { error: error instanceof Error ? error.message : String(error) });
    // The call's activity record, made once its answer is out (or dropped, or failed): nothing the answer needs.
    const later: Array<() => void> = [];
    const recordNow = () => {
      for (const task of later.splice(0)) {
        try {
          task();
        } catch (error) {
          fail(error);
        }
      }
    };
    const finish = () => {
      this.inflight.delete(id);
      this.cancelled.delete(id);
      done(id);
    };
    // Written once the run is over, unless cancelled first; the slot frees once the line is out.
    const send = (json: string) => {
      let written: Promise<void> | undefined;
      try {
        if (!this.cancelled.has(id)) written = write(`${json}\n`);
      } catch (error) {
        fail(error);
      }
      recordNow();
      if (!written) return finish();
      written.then(finish, (error: unknown) => {
        fail(error);
        finish();
      });
    };
    let answer: MaybePromise<string>;
    try {
      answer = this.tools.answer(call, scope, (record) => later.push(record));
    } catch (error) {
      answer = Promise.reject(error);
    }
    if (isPromise(answer)) {
      answer.then(send, (error: unknown) => {
        fail(error);
        recordNow();
        finish();
      });
    } else {
      // Answered synchronously (a read): still written in a microtask, so that a notifications/cancelled later in
      // the same chunk drops it, as it drops an answer still being computed (a promise reaction: queueMicrotask
      // would wrap each in an AsyncResource).
      const json = answer;
      void SETTLED.then(() => send(json));
    }
    return id;
  }
}
