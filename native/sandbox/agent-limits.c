/* apply_agent_limits(): see limits.h. */
#define _GNU_SOURCE
#include "agent-limits.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fail.h"

void apply_agent_limits(const struct options *o) {
  int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, AGENT_OOM_SCORE_ADJ, strlen(AGENT_OOM_SCORE_ADJ)) < 0)
    fail("cannot raise oom_score_adj to %s: %s", AGENT_OOM_SCORE_ADJ, strerror(errno));
  close(fd);
  if (o->max_file_size > 0) {
    struct rlimit limit = {.rlim_cur = (rlim_t)o->max_file_size, .rlim_max = (rlim_t)o->max_file_size};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) fail("cannot set RLIMIT_FSIZE to %lld: %s", o->max_file_size, strerror(errno));
  }
}
