/* Landlock confinement: the filesystem allowlist (--ro, --rw, --rw-dev), the TCP-connect ban and the signal and
   abstract Unix socket scopes, built as one ruleset and applied to the calling process just before exec. */
#ifndef URLBRIDGE_SANDBOX_LANDLOCK_H
#define URLBRIDGE_SANDBOX_LANDLOCK_H

#include "options.h"

/* The running kernel's Landlock ABI version; 0 when it has none. */
int landlock_abi(void);
/* Builds the ruleset; returns its fd, or -1 when Landlock is unavailable and not required. */
int build_ruleset(const struct options *o);
/* Restricts this process (and what it executes) to the ruleset, and closes it. */
void apply_ruleset(int ruleset);

#endif
