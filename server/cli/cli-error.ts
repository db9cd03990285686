// CLI failures: one line for stderr and an exit status (1 = the operation failed, 2 = bad usage).

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export class CliError extends Error {
  override name = "CliError";
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(`${message} (see \`urlbridge help\`)`, EXIT_USAGE);
