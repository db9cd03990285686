// Who drives the soak's load: this process alone, or `--clients=N` child processes, each with its share of the
// sessions and of the requests in flight. One Node process timing 16 sessions' answers adds its own event-loop
// delay to every figure (loop-delay.ts measures it); spread over several processes, each loop has less to do per
// turn, so what is left of the reads' tail is the bridge's. Every client's tally is merged into one.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { SoakSession } from "./fleet.js";
import { createLoad, emptyTally, type LoadTally, type MixName } from "./load.js";
import { watchOwnLoop, type LoopDelay } from "./loop-delay.js";

export interface LoadPlan {
  sessions: SoakSession[];
  inflight: number;
  seed: number;
  mix: MixName;
  gapMs: number;
  durationMs: number;
}

/** What one client measured: its tally, its own loop's delay and its CPU time (µs) over the load. */
export interface ClientResult {
  tally: LoadTally;
  loop: LoopDelay;
  cpuUs: number;
}

/** A tally as it crosses the IPC channel (Maps as entry arrays). */
interface WireResult {
  tally: Omit<LoadTally, "errors" | "terminalIds" | "expected"> & {
    errors: Array<[string, number]>;
    terminalIds: Array<[number, string[]]>;
    expected: Array<[string, string]>;
  };
  loop: LoopDelay;
  cpuUs: number;
}

const CHILD = fileURLToPath(new URL("./client-process.ts", import.meta.url));

/** Runs one client's share of the load in this process; `watch` gets its tally as it fills. */
export async function runClient(plan: LoadPlan, watch?: (tally: LoadTally) => void): Promise<ClientResult> {
  const load = createLoad(plan.sessions, plan.inflight, plan.seed, plan.mix, plan.gapMs);
  watch?.(load.tally);
  const loop = watchOwnLoop();
  const cpuBefore = process.cpuUsage();
  await load.run(plan.durationMs);
  const cpu = process.cpuUsage(cpuBefore);
  return { tally: load.tally, loop: loop.stop(), cpuUs: cpu.user + cpu.system };
}

export function toWire(result: ClientResult): WireResult {
  const { tally } = result;
  return {
    ...result,
    tally: {
      ...tally,
      errors: [...tally.errors],
      terminalIds: [...tally.terminalIds],
      expected: [...tally.expected],
    },
  };
}

function fromWire(wire: WireResult): ClientResult {
  const { tally } = wire;
  return {
    ...wire,
    tally: {
      ...tally,
      errors: new Map(tally.errors),
      terminalIds: new Map(tally.terminalIds),
      expected: new Map(tally.expected),
    },
  };
}

/** Session i goes to client i mod n; the requests in flight are shared out as evenly as they divide. */
export function splitPlan(plan: LoadPlan, clients: number): LoadPlan[] {
  return Array.from({ length: clients }, (_, c) => ({
    ...plan,
    sessions: plan.sessions.filter((_s, i) => i % clients === c),
    inflight: Math.floor(plan.inflight / clients) + (c < plan.inflight % clients ? 1 : 0),
    seed: plan.seed + c,
  }));
}

/** A forked client (client-process.ts, the same loader as this process: tsx), once it is ready for its plan. */
function startChild(): Promise<(plan: LoadPlan) => Promise<ClientResult>> {
  return new Promise((ready, failed) => {
    const child = fork(CHILD, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    let result: ClientResult | undefined;
    const exited = new Promise<ClientResult>((resolve, reject) => {
      child.once("exit", (code) => {
        if (result) resolve(result);
        else reject(new Error(`a soak client exited (${code}) without its tally`));
        failed(new Error(`a soak client exited (${code}) before it was ready`));
      });
    });
    child.once("error", failed);
    child.once("message", () => {
      child.once("message", (message) => {
        result = fromWire(message as WireResult);
      });
      ready((plan) => {
        child.send(plan);
        return exited;
      });
    });
  });
}

/**
 * The whole load: in this process (clients = 1) or across child processes, all started before the load is; `onStart`
 * runs just before it starts (the probes); `watch` gets the live tally when there is one (a single client). One
 * result per client.
 */
export async function runClients(
  plan: LoadPlan,
  clients: number,
  onStart: () => void,
  watch?: (tally: LoadTally) => void,
): Promise<ClientResult[]> {
  if (clients <= 1) {
    onStart();
    return [await runClient(plan, watch)];
  }
  const children = await Promise.all(Array.from({ length: clients }, startChild));
  onStart();
  return Promise.all(splitPlan(plan, clients).map((share, c) => children[c]!(share)));
}

/** The clients' tallies as one. */
export function mergeTallies(tallies: LoadTally[]): LoadTally {
  const merged = emptyTally();
  for (const tally of tallies) {
    for (const record of tally.records) merged.records.push(record);
    for (const [key, n] of tally.errors) merged.errors.set(key, (merged.errors.get(key) ?? 0) + n);
    merged.writesPolled += tally.writesPolled;
    merged.doubleExecutions += tally.doubleExecutions;
    for (const [session, ids] of tally.terminalIds)
      merged.terminalIds.set(session, [...(merged.terminalIds.get(session) ?? []), ...ids]);
    for (const [file, content] of tally.expected) merged.expected.set(file, content);
  }
  return merged;
}
