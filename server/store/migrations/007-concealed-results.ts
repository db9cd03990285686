// No live capability in recorded answers (issue 28, item 1): results and checkpoints recorded before this
// migration hold their session's tokens verbatim (a `retry` or `read` URL); they, the activity log's
// parameters and call ids, and staged chunks are rewritten with placeholders (capability-text.ts). The old pages are zeroed (secure_delete), and database.ts vacuums and truncates the WAL.
import path from "node:path";
import { createCapabilitySealer, loadCapabilityKey } from "../capability-key.js";
import { concealCapabilities, type CapabilityTokens } from "../capability-text.js";
import type { Migration } from "./index.js";

export const concealedResults: Migration = {
  version: 7,
  name: "concealed-results",
  sql: "",
  scrub: true,
  up(db) {
    const sealer = createCapabilitySealer(loadCapabilityKey(path.dirname(db.name)).key);
    const capsOf = db.prepare("SELECT kind, sealed FROM capabilities WHERE session_id = ? AND generation = ?");
    const update = db.prepare("UPDATE intents SET result = ?, checkpoint = ? WHERE id = ?");
    const updateActivity = db.prepare("UPDATE activity SET params = ?, call_id = ? WHERE id = ?");
    const updateChunk = db.prepare(
      "UPDATE staged_chunks SET content = ? WHERE session_id = ? AND generation = ? AND blob = ? AND idx = ?",
    );
    const scopes = db
      .prepare(
        "SELECT session_id, generation FROM intents UNION SELECT session_id, generation FROM activity UNION SELECT session_id, generation FROM staged_chunks",
      )
      .all() as Array<{
      session_id: string;
      generation: number;
    }>;
    const intentsOf = db.prepare(
      "SELECT id, result, checkpoint FROM intents WHERE session_id = ? AND generation = ? AND (result IS NOT NULL OR checkpoint IS NOT NULL)",
    );
    const activityOf = db.prepare(
      "SELECT id, params, call_id FROM activity WHERE session_id = ? AND generation = ? AND (params IS NOT NULL OR call_id IS NOT NULL)",
    );
    const chunksOf = db.prepare("SELECT blob, idx, content FROM staged_chunks WHERE session_id = ? AND generation = ?");
    for (const scope of scopes) {
      const tokens: CapabilityTokens = {};
      for (const c of capsOf.all(scope.session_id, scope.generation) as Array<{
        kind: keyof CapabilityTokens;
        sealed: Buffer;
      }>) {
        const token = sealer.open(c.sealed);
        if (token !== undefined) tokens[c.kind] = token;
      }
      const conceal = (text: string | null) => (text === null ? null : concealCapabilities(text, tokens));
      for (const r of intentsOf.all(scope.session_id, scope.generation) as Array<{
        id: number;
        result: string | null;
        checkpoint: string | null;
      }>) {
        update.run(conceal(r.result), conceal(r.checkpoint), r.id);
      }
      for (const r of activityOf.all(scope.session_id, scope.generation) as Array<{
        id: number;
        params: string | null;
        call_id: string | null;
      }>) {
        updateActivity.run(conceal(r.params), conceal(r.call_id), r.id);
      }
      for (const r of chunksOf.all(scope.session_id, scope.generation) as Array<{
        blob: string;
        idx: number;
        content: string;
      }>) {
        updateChunk.run(concealCapabilities(r.content, tokens), scope.session_id, scope.generation, r.blob, r.idx);
      }
    }
  },
};
