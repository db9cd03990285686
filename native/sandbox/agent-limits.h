/* Agent limits (issue 28): the kernel's OOM killer picks the command's processes before anything else (raising
   one's own oom_score_adj needs no privilege; descendants inherit it), and no file it writes grows past
   --max-file-size (soft and hard limit alike, so the command cannot raise it; past it the write fails with EFBIG
   or SIGXFSZ ends the writer). */
#ifndef URLBRIDGE_SANDBOX_AGENT_LIMITS_H
#define URLBRIDGE_SANDBOX_AGENT_LIMITS_H

#include "options.h"

/* What every command gets in /proc/self/oom_score_adj (server/sandbox/agent-limits.ts reads the same value). */
#define AGENT_OOM_SCORE_ADJ "1000"

void apply_agent_limits(const struct options *o);

#endif
