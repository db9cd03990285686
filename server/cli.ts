// The `urlbridge` command: `serve` (default) runs the bridge; token, project, session and mcp (a stdio relay)
// talk to the running control plane; backup and restore work on the state directory (cli/backup-commands.ts).
// Failures are one line on stderr and a non-zero exit (1 failed, 2 bad usage).
import { ConfigError, loadConfig, type Config } from "./config.js";
import { parseCommandLine, USAGE } from "./cli/args.js";
import { CliError, EXIT_FAILURE, EXIT_USAGE } from "./cli/cli-error.js";
import { runProjectCommand, runSessionCommand, runTokenCommand, type Print } from "./cli/commands.js";
import { isEntryPoint } from "./entry-point.js";

function loadCliConfig(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message.replace(/\n\s*/g, " "), EXIT_USAGE);
    throw error;
  }
}

/** Runs one command line; resolves to the exit status (serve resolves once the servers listen). */
export async function runCli(
  argv: string[],
  print: Print = (text) => process.stdout.write(`${text}\n`),
): Promise<number> {
  try {
    const cmd = parseCommandLine(argv);
    switch (cmd.command) {
      case "help":
        print(USAGE);
        return 0;
      case "version": {
        const { packageVersion } = await import("./bridge.js");
        print(packageVersion());
        return 0;
      }
      case "serve": {
        loadCliConfig();
        const { main } = await import("./main.js");
        await main();
        return 0;
      }
      case "token":
        runTokenCommand(loadCliConfig(), cmd, print);
        return 0;
      case "mcp": {
        // stdout belongs to JSON-RPC from here on: every message of this command goes to stderr.
        const { mcpCommandEnv, runMcpCommand } = await import("./cli/mcp-command.js");
        await runMcpCommand(loadCliConfig(mcpCommandEnv(cmd, process.env)), cmd);
        return 0;
      }
      case "changes":
      case "revert": {
        const { runChangesCommand, runRevertCommand } = await import("./cli/review-commands.js");
        await (cmd.command === "changes" ? runChangesCommand : runRevertCommand)(loadCliConfig(), cmd, print);
        return 0;
      }
      case "worktree show":
      case "worktree merge":
      case "worktree keep":
      case "worktree discard": {
        const { runWorktreeCommand } = await import("./cli/worktree-commands.js");
        await runWorktreeCommand(loadCliConfig(), cmd, print);
        return 0;
      }
      case "backup":
      case "restore": {
        const { runBackupCommand, runRestoreCommand } = await import("./cli/backup-commands.js");
        await (cmd.command === "backup" ? runBackupCommand : runRestoreCommand)(loadCliConfig(), cmd, print);
        return 0;
      }
      case "session enable":
      case "session disable":
      case "session delete":
      case "session rename":
      case "project edit":
      case "project remove": {
        const { runProjectAction, runSessionAction } = await import("./cli/manage-commands.js");
        await (cmd.command.startsWith("project ") ? runProjectAction : runSessionAction)(loadCliConfig(), cmd, print);
        return 0;
      }
      default:
        if (cmd.command.startsWith("project ")) await runProjectCommand(loadCliConfig(), cmd, print);
        else await runSessionCommand(loadCliConfig(), cmd, print);
        return 0;
    }
  } catch (error) {
    if (error instanceof CliError) {
      process.stderr.write(`urlbridge: ${error.message}\n`);
      return error.exitCode;
    }
    process.stderr.write(`urlbridge: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILURE;
  }
}

const invokedDirectly = isEntryPoint(import.meta.url);
if (invokedDirectly) {
  void runCli(process.argv.slice(2)).then((code) => {
    if (code !== 0) process.exitCode = code;
  });
}
