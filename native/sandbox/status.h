/* How the run ended, told twice: one JSON line on --status-fd ({"exitCode","signal","leftovers"}, read by
   server/sandbox/launcher.ts) and the launcher's exit code (PROGRAM's, 128 + its signal, or LAUNCHER_ERROR). */
#ifndef URLBRIDGE_SANDBOX_STATUS_H
#define URLBRIDGE_SANDBOX_STATUS_H

#include "options.h"

/* Writes the status line for PROGRAM's wait status (program_status) and returns the exit code to end with. */
int finish(const struct options *o, int leftovers);

#endif
