// `npm run soak -- --duration=300 --sessions=16 --inflight=200`: the soak run's options, bounded so that a typo
// cannot start an unbounded load. Loopback only: the bridge is a child process on 127.0.0.1. `--mix=read-write`
// runs issue 34's mix (reads and journaled edits only); `--cpu-prof=DIR` has the bridge write a CPU profile there;
// `--bridge=PATH` runs another build's dist/server/main.js (an A/B against this checkout's build); `--gap-ms=N` has
// each worker pause N ms, untimed, after each answer (the bench's "as a client does" method; 0, the default, is a
// saturating closed loop); `--clients=N` shares the sessions out to N client processes (clients.ts), so one client's
// own event-loop delay is not most of the reads' tail.
import { MIXES, type MixName } from "./load.js";

export interface SoakOptions {
  /** Seconds of load (after set-up). */
  durationS: number;
  sessions: number;
  /** Requests kept in flight at once, across all sessions. */
  inflight: number;
  /** Seconds between resource samples. */
  sampleS: number;
  /** Markdown file whose <!-- soak:start --> / <!-- soak:end --> block gets the report, or undefined. */
  writeTo: string | undefined;
  seed: number;
  /** Which weights the load uses (load.ts MIXES). */
  mix: MixName;
  /** A folder the bridge writes its CPU profile into (node --cpu-prof), or undefined. */
  cpuProfDir: string | undefined;
  /** Another build's dist/server/main.js to run instead of this checkout's (an A/B), or undefined. */
  bridgeEntry: string | undefined;
  /** Client processes the sessions and requests in flight are shared out to (clients.ts); 1: this process alone. */
  clients: number;
  /** Untimed pause of each worker after each answer, in ms; 0 keeps the bridge saturated. */
  gapMs: number;
}

const LIMITS = {
  durationS: [5, 3600],
  sessions: [1, 16],
  inflight: [1, 200],
  sampleS: [1, 60],
  seed: [0, 2 ** 31],
  gapMs: [0, 1000],
  clients: [1, 8],
} as const;

export function parseSoakOptions(argv: string[]): SoakOptions {
  const options: SoakOptions = {
    durationS: 300,
    sessions: 16,
    inflight: 200,
    sampleS: 10,
    writeTo: undefined,
    seed: 1,
    mix: "full",
    cpuProfDir: undefined,
    bridgeEntry: undefined,
    gapMs: 0,
    clients: 1,
  };
  for (const arg of argv) {
    const m = /^--([a-z-]+)=(.*)$/.exec(arg);
    if (!m)
      throw new Error(
        `unknown argument ${arg}; use --duration=S --sessions=N --inflight=N --sample=S --seed=N --gap-ms=N --clients=N --mix=${Object.keys(MIXES).join("|")} --write=FILE --cpu-prof=DIR --bridge=MAIN_JS`,
      );
    const [, name, value] = m as unknown as [string, string, string];
    if (name === "write") {
      options.writeTo = value;
      continue;
    }
    if (name === "cpu-prof") {
      options.cpuProfDir = value;
      continue;
    }
    if (name === "bridge") {
      options.bridgeEntry = value;
      continue;
    }
    if (name === "mix") {
      if (!Object.hasOwn(MIXES, value))
        throw new Error(`--mix must be one of ${Object.keys(MIXES).join(", ")}, got ${value}`);
      options.mix = value as MixName;
      continue;
    }
    const key = (
      {
        duration: "durationS",
        sessions: "sessions",
        inflight: "inflight",
        sample: "sampleS",
        seed: "seed",
        "gap-ms": "gapMs",
        clients: "clients",
      } as const
    )[name as "duration"];
    if (!key) throw new Error(`unknown option --${name}`);
    const n = Number(value);
    const [min, max] = LIMITS[key];
    if (!Number.isInteger(n) || n < min || n > max)
      throw new Error(`--${name} must be an integer in ${min}..${max}, got ${value}`);
    options[key] = n;
  }
  if (options.clients > options.inflight)
    throw new Error(
      `--clients=${options.clients} needs at least as many requests in flight, got --inflight=${options.inflight}`,
    );
  return options;
}
