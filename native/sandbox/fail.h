/* The launcher's one way to refuse: a line on stderr naming what to change, and exit code LAUNCHER_ERROR, which
   the bridge reads as "the launcher did not start the program" (server/sandbox/launcher.ts). */
#ifndef URLBRIDGE_SANDBOX_FAIL_H
#define URLBRIDGE_SANDBOX_FAIL_H

#define LAUNCHER_ERROR 125

void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
