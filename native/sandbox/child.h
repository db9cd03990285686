/* The launcher's child, PROGRAM-to-be: its own session, the agent limits, the terminal (--tty), the Landlock
   ruleset, the identity drop (--uid/--gid), the working directory (--cwd-root/--cwd), then exec. */
#ifndef URLBRIDGE_SANDBOX_CHILD_H
#define URLBRIDGE_SANDBOX_CHILD_H

#include <signal.h>

#include "options.h"

/* In the child: confine, change identity, enter the directory, exec. Never returns. */
void run_program(const struct options *o, const sigset_t *original_mask) __attribute__((noreturn));

#endif
