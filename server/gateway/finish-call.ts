// The end of every authenticated call: the answer's bytes, then its range snapshot (for /z) and its activity
// record for the operator, whichever way the call was answered.
import type http from "node:http";
import { callRecordOf } from "../edge/call.js";
import type { RunOutcome } from "../kernel/tool/runner.js";
import { createActivityRecorder, redactParams, type CallRecord } from "../edge/activity-recorder.js";
import type { UrlCall } from "./call-context.js";
import { decodingNotice } from "../url-grammar/decoding-notice.js";
import { utf8SourcesOf } from "../text/utf8-json.js";
import { JSON_CONTENT_TYPE, sendBytes, serializeAgentJson } from "./respond.js";

export type RecordCall = ReturnType<typeof createActivityRecorder>;

/**
 * What the activity log says about one call. `tool` is the tool or gateway route that answered, or null when the
 * call was refused before any was invoked.
 */
export function callRecord(
  call: UrlCall,
  route: string,
  tool: string | null,
  body: { ok: boolean; errorCode?: string },
  outcome?: RunOutcome,
): CallRecord {
  return callRecordOf({
    cap: call.auth.cap,
    route: `/${route}`,
    tool,
    body,
    startedAt: call.startedAt,
    outcome,
    params: redactParams(call.url.query.segments, call.url.query.raw, call.rawField),
  });
}

/** Sends a JSON answer (HTTP 200, ok or not) and keeps its snapshot and record. */
/** `keepSnapshot: false` for a failed /z: range reads, answered or refused, never replace the last=1 pointer. */
export function finishCall(
  res: http.ServerResponse,
  call: UrlCall,
  tool: string | null,
  outcome: RunOutcome,
  record: RecordCall,
  keepSnapshot = true,
): void {
  const { state } = call;
  const { body } = outcome;
  // An ambiguous target is said so in every answer it gets, replays included: the reading is the URL's.
  const decoding = decodingNotice(call.url);
  const answer = serializeAgentJson(
    state,
    decoding === undefined ? body : { ...body, decoding },
    call.baseUrl(call.auth.base),
    utf8SourcesOf(body),
  );
  sendBytes(res, 200, JSON_CONTENT_TYPE, answer.bytes);
  // Bookkeeping after the bytes are on their way: it still runs before this process reads the
  // agent's next request, so a /z for this answer always finds it.
  if (keepSnapshot) state.snapshots.add(answer.id, answer.bytes);
  record(callRecord(call, call.route, outcome.refused ? null : tool, body, outcome));
}
