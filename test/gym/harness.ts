// Runs gym cases end to end: a real bridge, one real proxy per intermediary, real readers. Checks each
// case against its intermediary's contract and counts executions per mutation from the activity log.
import { startTestBridge, type AgentSession, type TestBridge } from "../helpers/bridge.js";
import { GymAgent } from "./agent.js";
import { CASE_KINDS, type CaseKind, type Verdict } from "./cases.js";
import type { Form } from "./forms.js";
import type { Intermediary } from "./matrix.js";
import { startHostileProxy, type HostileProxy } from "./proxy.js";
import { createReader, type Reader, type ReaderName } from "./readers.js";
import { pairCarries } from "./server-view.js";

export const READER_TIMEOUT_MS = 20_000;
/** A case that has not reached a verdict by then is a failure (a hang is a finding, not a stuck audit). */
const CASE_TIMEOUT_MS = 90_000;
const ACTIVITY_PAGE = 1000;

export interface CaseSpec {
  id: string;
  kind: CaseKind;
  text: string;
  /** Corpus entry name or fuzz id. */
  source: string;
  form: Form;
  reader: ReaderName;
  intermediary: Intermediary;
}

export interface CaseResult extends Verdict {
  id: string;
  kind: string;
  source: string;
  form: string;
  reader: string;
  intermediary: string;
  /** The outcome is what the intermediary's contract allows. */
  passed: boolean;
}

export interface Gym {
  bridge: TestBridge;
  session: AgentSession;
  /** Compact routes the running bridge serves. */
  routes: Set<string>;
  kinds: CaseKind[];
  /** Kinds whose routes do not exist (yet): reported, never faked. */
  missingKinds: string[];
  run(spec: CaseSpec): Promise<CaseResult>;
  /** Executions per mutation call id, from the activity log ("new" = the request that ran it). */
  executionsByCallId(): Map<string, number>;
  close(): Promise<void>;
}

/** Whether a kind can carry `text` in `form` through an intermediary (see pairCarries for the one documented hole). */
export function carriesThrough(form: Form, via: Intermediary, kind: CaseKind, text: string): boolean {
  return kind
    .wireTexts(text)
    .every((t) => form.carries(t) && (!via.proxy.rewrite || pairCarries(form.name, via.proxy.rewrite, t)));
}

async function listRoutes(session: AgentSession): Promise<Set<string>> {
  const routes = new Set<string>();
  for (const base of [session.r, session.m!]) {
    const manifest = (await (await fetch(`${base}/manifest`)).json()) as { tools?: Array<{ route: string }> };
    for (const tool of manifest.tools ?? []) routes.add(tool.route.replace(/^\//, ""));
  }
  return routes;
}

export async function startGym(options: {
  intermediaries: readonly Intermediary[];
  readers: readonly ReaderName[];
}): Promise<Gym> {
  const bridge = await startTestBridge();
  const session = await bridge.session({ write: true, terminal: true });
  const routes = await listRoutes(session);
  const kinds = CASE_KINDS.filter((k) => k.routes.every((r) => routes.has(r)));
  const missingKinds = CASE_KINDS.filter((k) => !kinds.includes(k)).map(
    (k) => `${k.name} (needs /${k.routes.filter((r) => !routes.has(r)).join(", /")})`,
  );
  const proxies = new Map<string, HostileProxy>();
  for (const via of options.intermediaries)
    proxies.set(via.name, await startHostileProxy(bridge.bridge.dataUrl, via.proxy));
  const readers = new Map<ReaderName, Reader>();
  for (const name of options.readers) readers.set(name, await createReader(name));

  const executions = new Map<string, number>();
  let activityCursor = 0;
  const collectActivity = () => {
    const rows = bridge.bridge.store.activity.list({
      sessionId: session.sessionId,
      afterId: activityCursor,
      limit: ACTIVITY_PAGE,
    });
    // Read after every case, so a full page means rows were left out and the count could not be trusted.
    if (rows.length === ACTIVITY_PAGE) throw new Error(`more than ${ACTIVITY_PAGE} activity rows between two cases`);
    for (const row of rows) {
      if (row.callId && row.dedupe === "new") executions.set(row.callId, (executions.get(row.callId) ?? 0) + 1);
      activityCursor = Math.max(activityCursor, row.id);
    }
  };

  async function run(spec: CaseSpec): Promise<CaseResult> {
    const reader = readers.get(spec.reader);
    const proxy = proxies.get(spec.intermediary.name);
    if (!reader || !proxy)
      throw new Error(`gym not started with reader ${spec.reader} and intermediary ${spec.intermediary.name}`);
    const agent = new GymAgent({
      reader,
      bridgeOrigin: bridge.bridge.dataUrl,
      viaOrigin: proxy.origin,
      timeoutMs: READER_TIMEOUT_MS,
      clientTimeoutMs: spec.intermediary.clientTimeoutMs,
    });
    const label = {
      id: spec.id,
      kind: spec.kind.name,
      source: spec.source,
      form: spec.form.name,
      reader: spec.reader,
      intermediary: spec.intermediary.name,
    };
    let verdict: Verdict;
    let timer: NodeJS.Timeout | undefined;
    try {
      const running = spec.kind.run(spec.text, {
        id: spec.id,
        form: spec.form,
        agent,
        bases: { r: session.r, m: session.m! },
        projectDir: bridge.projectDir,
        dwellMs: spec.kind.mutation ? (spec.intermediary.dwellMs ?? 0) : 0,
      });
      const watchdog = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no verdict within ${CASE_TIMEOUT_MS} ms`)), CASE_TIMEOUT_MS);
      });
      verdict = await Promise.race([running, watchdog]);
    } catch (error) {
      verdict = {
        outcome: "wrong",
        detail: `case threw: ${error instanceof Error ? error.message : String(error)}`,
        fetches: 0,
        recoveredByRange: false,
      };
    } finally {
      clearTimeout(timer);
    }
    collectActivity();
    const allowed =
      verdict.outcome === "exact" ||
      (verdict.outcome === "refused" && spec.intermediary.contract === "exact-or-refused");
    const onceAtMost = verdict.executions === undefined || verdict.executions <= (verdict.outcome === "exact" ? 1 : 0);
    const ranOnce = verdict.executions === undefined || verdict.outcome !== "exact" || verdict.executions === 1;
    return { ...label, ...verdict, passed: allowed && onceAtMost && ranOnce };
  }

  return {
    bridge,
    session,
    routes,
    kinds,
    missingKinds,
    run,
    executionsByCallId: () => {
      collectActivity();
      return executions;
    },
    async close() {
      for (const reader of readers.values()) await reader.close();
      for (const proxy of proxies.values()) await proxy.close();
      await bridge.close();
    },
  };
}
