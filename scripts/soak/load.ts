// The soak's mixed load: every worker loops until the deadline, picking an operation by weight (reads, searches,
// journaled writes and edits and their hidden-retry replays, terminal commands), and records latency and outcome per
// kind; afterwards every acknowledged write and edit is looked for on disk (lost) and every replay's answer checked
// (doubled).
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { encodeQueryValue, encodeUrlText } from "../../server/url-grammar/encode.js";
import { SEED_FILES, type SoakSession } from "./fleet.js";

export type OpKind =
  "read" | "grep" | "find" | "write" | "write-replay" | "edit" | "edit-replay" | "terminal" | "terminal-replay";

/**
 * The operations' weights, out of 100. "full": reads, searches, journaled writes and terminal commands, with hidden
 * retries. "read-write": issue 34's mix, reads and journaled edits only (a /w creating a file, a later /e changing
 * it once, and hidden retries of both), so what the reads wait for is the journal, not a search or a spawn.
 */
export const MIXES = {
  full: [
    ["read", 45],
    ["grep", 12],
    ["find", 5],
    ["write", 25],
    ["write-replay", 6],
    ["terminal", 5],
    ["terminal-replay", 2],
  ],
  "read-write": [
    ["read", 55],
    ["write", 18],
    ["edit", 17],
    ["write-replay", 5],
    ["edit-replay", 5],
  ],
} as const satisfies Record<string, ReadonlyArray<readonly [OpKind, number]>>;
export type MixName = keyof typeof MIXES;

/** A /j poll waits this long per request while a journaled write is still pending. */
const POLL_WAIT_MS = 1500;

export interface OpRecord {
  kind: OpKind;
  ms: number;
}

export interface LoadTally {
  records: OpRecord[];
  /** "transport" (socket error), "http_<status>", or the errorCode of an ok:false answer; by kind. */
  errors: Map<string, number>;
  /** Writes still pending after their first answer (the default wait): how often polling was needed. */
  writesPolled: number;
  /** A replay that did not come back as dedupe=replayed: a second execution. */
  doubleExecutions: number;
  /** Terminal ids each session ran (checked against the project's log file afterwards). */
  terminalIds: Map<number, string[]>;
  /** What each acknowledged write or edit left on disk: absolute file -> its content (checked afterwards). */
  expected: Map<string, string>;
}

function seeded(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

function url(base: string, route: string, params: Array<[string, string | number]>, raw?: string): string {
  const parts = params.map(([k, v]) => `${k}=${encodeQueryValue(String(v))}`);
  if (raw !== undefined) parts.push(`raw=${encodeUrlText(raw)}`);
  return `${base}/${route}${parts.length ? `?${parts.join("&")}` : ""}`;
}

/** Acknowledged writes and edits whose file does not hold what they left (lost), out of how many were checked. */
export function lostChanges(tally: LoadTally): { checked: number; lost: number } {
  let lost = 0;
  for (const [file, content] of tally.expected) {
    let now: string | undefined;
    try {
      now = fs.readFileSync(file, "utf8");
    } catch {
      now = undefined;
    }
    if (now !== content) lost += 1;
  }
  return { checked: tally.expected.size, lost };
}

/** A tally with nothing counted yet. */
export function emptyTally(): LoadTally {
  return {
    records: [],
    errors: new Map(),
    writesPolled: 0,
    doubleExecutions: 0,
    terminalIds: new Map(),
    expected: new Map(),
  };
}

/** `gapMs`: each worker's untimed pause after each answer (0: the next call at once, a saturating closed loop). */
export function createLoad(sessions: SoakSession[], inflight: number, seed: number, mix: MixName = "full", gapMs = 0) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: inflight });
  const random = seeded(seed);
  const tally = emptyTally();
  const weights = MIXES[mix];
  const written: Array<{ session: SoakSession; url: string }> = [];
  /** Files written and not yet edited, each edited at most once (so no two edits race for the same old text). */
  const editable: Array<{ session: SoakSession; n: number }> = [];
  const edited: Array<{ session: SoakSession; url: string }> = [];
  const ran: Array<{ session: SoakSession; url: string }> = [];
  let counter = 0;

  const count = (key: string) => tally.errors.set(key, (tally.errors.get(key) ?? 0) + 1);

  function get(target: string): Promise<Record<string, unknown> | undefined> {
    return new Promise((resolve) => {
      const req = http.get(target, { agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          if (res.statusCode !== 200) {
            count(`http_${res.statusCode}`);
            return resolve(undefined);
          }
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>);
          } catch {
            count("bad_json");
            resolve(undefined);
          }
        });
        res.on("error", () => (count("transport"), resolve(undefined)));
      });
      req.on("error", () => (count("transport"), resolve(undefined)));
    });
  }

  /** A mutation answer: polls /j while pending, so the latency is the time until the outcome is known. */
  async function settle(
    session: SoakSession,
    body: Record<string, unknown> | undefined,
  ): Promise<Record<string, unknown> | undefined> {
    let current = body;
    let polled = false;
    for (let i = 0; i < 40 && current && (current.state === "pending" || current.state === "running"); i++) {
      polled = true;
      current = await get(
        url(session.m, "j", [
          ["call", String(current.callId)],
          ["wait", POLL_WAIT_MS],
        ]),
      );
    }
    if (polled) tally.writesPolled += 1;
    return current;
  }

  /** A hidden retry of an earlier mutation URL: an answer that is not a replay or a join ran it a second time. */
  async function replayOneOf(
    done: Array<{ session: SoakSession; url: string }>,
  ): Promise<Record<string, unknown> | undefined> {
    const prior = done[Math.floor(random() * done.length)]!;
    const body = await settle(prior.session, await get(prior.url));
    if (body?.ok && body.dedupe !== "replayed" && body.dedupe !== "joined") tally.doubleExecutions += 1;
    return body;
  }

  function pick(): OpKind {
    let roll = random() * 100;
    for (const [kind, weight] of weights) {
      roll -= weight;
      if (roll < 0) return kind;
    }
    return "read";
  }

  async function one(): Promise<void> {
    const session = sessions[Math.floor(random() * sessions.length)]!;
    let kind = pick();
    if (kind === "write-replay" && written.length === 0) kind = "write";
    if (kind === "edit" && editable.length === 0) kind = "write";
    if (kind === "edit-replay" && edited.length === 0) kind = editable.length === 0 ? "write" : "edit";
    if (kind === "terminal-replay" && ran.length === 0) kind = "terminal";
    const started = performance.now();
    let body: Record<string, unknown> | undefined;
    switch (kind) {
      case "read":
        body = await get(url(session.r, "r", [["path", SEED_FILES[Math.floor(random() * SEED_FILES.length)]!]]));
        break;
      case "grep":
        body = await get(url(session.r, "g", [["path", "src"]], `value${Math.floor(random() * 120)} =`));
        break;
      case "find":
        body = await get(url(session.r, "f", [["path", "."]]));
        break;
      case "write": {
        const n = counter++;
        const target = url(session.m, "w", [["path", `soak/w-${n}.txt`]], `write ${n}\n`);
        body = await settle(session, await get(target));
        if (body?.ok) {
          written.push({ session, url: target });
          editable.push({ session, n });
          tally.expected.set(path.join(session.root, "soak", `w-${n}.txt`), `write ${n}\n`);
        }
        break;
      }
      case "edit": {
        const { session: owner, n } = editable.splice(Math.floor(random() * editable.length), 1)[0]!;
        const target = url(
          owner.m,
          "e",
          [
            ["path", `soak/w-${n}.txt`],
            ["old", `write ${n}`],
          ],
          `edit ${n}`,
        );
        body = await settle(owner, await get(target));
        if (body?.ok) {
          edited.push({ session: owner, url: target });
          tally.expected.set(path.join(owner.root, "soak", `w-${n}.txt`), `edit ${n}\n`);
        }
        break;
      }
      case "edit-replay":
        body = await replayOneOf(edited);
        break;
      case "write-replay":
        body = await replayOneOf(written);
        break;
      case "terminal": {
        const id = `t${counter++}`;
        const target = url(session.m, "x", [], `echo ${id} >> soak-x.log`);
        body = await settle(session, await get(target));
        if (body?.ok) {
          ran.push({ session, url: target });
          const ids = tally.terminalIds.get(session.index) ?? [];
          ids.push(id);
          tally.terminalIds.set(session.index, ids);
        }
        break;
      }
      case "terminal-replay":
        body = await replayOneOf(ran);
        break;
    }
    if (body && body.ok === false) count(`${kind}:${String(body.errorCode)}`);
    tally.records.push({ kind, ms: performance.now() - started });
  }

  return {
    tally,
    async run(durationMs: number): Promise<void> {
      const deadline = performance.now() + durationMs;
      const worker = async () => {
        while (performance.now() < deadline) {
          await one();
          if (gapMs > 0) await sleep(gapMs);
        }
      };
      await Promise.all(Array.from({ length: inflight }, worker));
      agent.destroy();
    },
  };
}
