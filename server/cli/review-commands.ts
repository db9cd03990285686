// `urlbridge changes <session>` and `urlbridge revert <session>`: a session's change set and exact diffs, and
// undo, over the control API (/api/sessions/:id/changes, /revert), the same kernel tools an agent's /c and /n run.
import type { Config } from "../config.js";
import type { ParsedCommand } from "./args.js";
import { CliError } from "./cli-error.js";
import { hint, type Print } from "./commands.js";
import { createControlClient } from "./control-client.js";
import { findSession } from "./find-session.js";

interface Listed {
  intents?: Array<{ callId: string; tool: string; changedAt: string; files: Array<{ path: string; change: string }> }>;
  files?: Array<{ path: string; change: string; intents?: string[] }>;
  notices?: Array<{ callId: string; tool: string; changedAt: string; notice: string }>;
  diff?: string;
  end?: number;
  total?: number;
  fingerprint?: string;
}

/** Most pages one `changes --path/--intent` follows (32 KiB each). */
const MAX_PAGES = 1000;

export async function runChangesCommand(config: Config, cmd: ParsedCommand, print: Print): Promise<void> {
  const client = createControlClient(config);
  const session = await findSession(client, cmd.args[0]!, hint(config, "session list"));
  const base = `/api/sessions/${encodeURIComponent(session.id)}/changes`;
  const query = new URLSearchParams();
  if (cmd.flags.intent) query.set("intent", cmd.flags.intent);
  if (cmd.flags.path) query.set("path", cmd.flags.path);
  if (!cmd.flags.intent && !cmd.flags.path) {
    const set = await client.request<Listed>("GET", base);
    if (cmd.flags.json) return print(JSON.stringify(set, null, 2));
    const intents = set.intents ?? [];
    // What could not be recorded (a terminal command past the checkpoint budget) is said, never left out.
    const notices = (set.notices ?? []).map((n) => `${n.changedAt}  ${n.callId}  ${n.tool}\n    ${n.notice}`);
    if (intents.length === 0 && notices.length === 0)
      return print(`Session ${session.name} has no recorded file changes.`);
    const lines = intents.flatMap((i) => [
      `${i.changedAt}  ${i.callId}  ${i.tool}`,
      ...i.files.map((f) => `    ${f.change.padEnd(10)} ${f.path}`),
    ]);
    const noted = notices.length > 0 ? `\n\nNot recorded:\n${notices.join("\n")}` : "";
    return print(`${lines.join("\n")}${noted}\n\nDiff: ${hint(config, `changes ${cmd.args[0]!} --path <p>`)}`);
  }
  let text = "";
  let page: Listed = {};
  for (let n = 0; n < MAX_PAGES; n++) {
    const q = new URLSearchParams(query);
    if (page.end !== undefined) {
      q.set("offset", String(page.end));
      q.set("fingerprint", page.fingerprint!);
    }
    page = await client.request<Listed>("GET", `${base}?${q.toString()}`);
    text += page.diff ?? "";
    if (page.end === undefined || page.end >= (page.total ?? 0)) break;
  }
  print(cmd.flags.json ? JSON.stringify({ ...page, diff: text, offset: 0 }, null, 2) : text.replace(/\n$/, ""));
}

export async function runRevertCommand(config: Config, cmd: ParsedCommand, print: Print): Promise<void> {
  const { intent, path, all, force } = cmd.flags;
  if (!intent && !path && !all) throw new CliError("name what to undo: --intent <callId>, --path <p> or --all");
  const client = createControlClient(config);
  const session = await findSession(client, cmd.args[0]!, hint(config, "session list"));
  const done = await client.request<{ summary: string; files: Array<{ path: string; op: string }> }>(
    "POST",
    `/api/sessions/${encodeURIComponent(session.id)}/revert`,
    {
      ...(intent ? { intent } : {}),
      ...(path ? { path } : {}),
      ...(all ? { all: true } : {}),
      ...(force ? { force: true } : {}),
    },
  );
  print(
    cmd.flags.json
      ? JSON.stringify(done, null, 2)
      : [done.summary, ...done.files.map((f) => `    ${f.op.padEnd(10)} ${f.path}`)].join("\n"),
  );
}
