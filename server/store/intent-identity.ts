// Who made an intent and where: the fields an intent's row and each file change it records share, and their
// reading from the snake_case columns both tables store them in.

export interface IntentIdentity {
  sessionId: string;
  generation: number;
  projectId: string;
  projectRoot: string;
  callId: string;
  tool: string;
}

/** The identity's columns, as intents and file_changes both name them. */
export interface RawIntentIdentity {
  session_id: string;
  generation: number;
  project_id: string;
  project_root: string;
  call_id: string;
  tool: string;
}

export function identityOf(r: RawIntentIdentity): IntentIdentity {
  return {
    sessionId: r.session_id,
    generation: r.generation,
    projectId: r.project_id,
    projectRoot: r.project_root,
    callId: r.call_id,
    tool: r.tool,
  };
}
