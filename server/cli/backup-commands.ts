// `urlbridge backup <file>` (an online copy of the state database, safe while the bridge runs; "-" writes it to
// stdout) and `urlbridge restore <file> [--key <capability-key>]` (into a state directory whose bridge is stopped).
import fs from "node:fs";
import path from "node:path";
import type { Config } from "../config.js";
import { backupDatabase, BackupError, restoreDatabase, type BackupSummary } from "../store/backup.js";
import { capabilityKeyPath } from "../store/capability-key.js";
import type { ParsedCommand } from "./args.js";
import { CliError } from "./cli-error.js";
import { controlUrl } from "./control-client.js";

export type Print = (text: string) => void;

/** How long restore waits for a running bridge's health answer before concluding that none runs here. */
const RUNNING_CHECK_TIMEOUT_MS = 1_500;

const summaryLine = (s: BackupSummary) =>
  `${s.projects} project(s), ${s.sessions} session(s), ${s.journalEntries} journal entries, schema ${s.schemaVersion}, ${s.bytes} bytes`;

function asCliError(error: unknown): never {
  if (error instanceof BackupError) throw new CliError(error.message);
  throw error;
}

export async function runBackupCommand(config: Config, cmd: ParsedCommand, print: Print): Promise<void> {
  const target = cmd.args[0]!;
  const toStdout = target === "-";
  // stdout carries the database itself with "-": the summary goes to stderr then.
  const say: Print = toStdout ? (text) => process.stderr.write(`${text}\n`) : print;
  const destination = toStdout ? path.join(config.stateDir, `.backup-${process.pid}.sqlite`) : path.resolve(target);
  let summary: BackupSummary;
  try {
    summary = await backupDatabase(config.stateDir, destination);
  } catch (error) {
    asCliError(error);
  }
  if (toStdout) {
    try {
      await new Promise<void>((resolve, reject) => {
        const stream = fs.createReadStream(destination);
        stream.on("error", reject);
        process.stdout.on("error", reject);
        stream.pipe(process.stdout, { end: false });
        stream.on("end", resolve);
      });
    } finally {
      fs.rmSync(destination, { force: true });
    }
  }
  if (cmd.flags.json) {
    say(JSON.stringify({ file: toStdout ? "-" : destination, ...summary }, null, 2));
    return;
  }
  say(`Backed up ${summaryLine(summary)} to ${toStdout ? "stdout" : destination}`);
  say(
    `Restoring it needs this bridge's capability key as well (${capabilityKeyPath(config.stateDir)}${summary.capabilityKeyId ? `, key ${summary.capabilityKeyId}` : ""}): ` +
      "keep one copy of that file apart from the backups; without it a backup opens no session (deploy/UPGRADE.md).",
  );
}

async function bridgeAnswers(config: Config): Promise<boolean> {
  try {
    const res = await fetch(`${controlUrl(config)}/api/health`, {
      signal: AbortSignal.timeout(RUNNING_CHECK_TIMEOUT_MS),
    });
    return res.ok;
  } catch {
    return false;
  }
}

export async function runRestoreCommand(config: Config, cmd: ParsedCommand, print: Print): Promise<void> {
  const backup = path.resolve(cmd.args[0]!);
  if (await bridgeAnswers(config)) {
    throw new CliError(
      `a bridge is running on this state directory (${controlUrl(config)} answers); stop it first (docker compose stop bridge), then restore with a one-off container (deploy/UPGRADE.md)`,
    );
  }
  let result;
  try {
    result = restoreDatabase(config.stateDir, backup, {
      keyFile: cmd.flags.key ? path.resolve(cmd.flags.key) : undefined,
    });
  } catch (error) {
    asCliError(error);
  }
  if (cmd.flags.json) {
    print(JSON.stringify(result, null, 2));
    return;
  }
  print(
    `Restored ${summaryLine(result)} into ${config.stateDir}${result.keyInstalled ? " with its capability key" : ""}.`,
  );
  if (result.previous) print(`The database it replaced is kept as ${result.previous}.`);
  print("Start the bridge again (docker compose up -d); sessions answer at the URLs they had.");
}
