/* run_program(): see child.h. */
#define _GNU_SOURCE
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-limits.h"
#include "fail.h"
#include "landlock.h"
#include "tty.h"

static void drop_identity(const struct options *o) {
  if (o->uid < 0) return;
  if (geteuid() != 0) fail("--uid/--gid need the launcher to run as root (it runs as uid %d)", (int)geteuid());
  if (setgroups(0, NULL) != 0) fail("setgroups: %s", strerror(errno));
  if (setgid((gid_t)o->gid) != 0) fail("setgid(%ld): %s", o->gid, strerror(errno));
  if (setuid((uid_t)o->uid) != 0) fail("setuid(%ld): %s", o->uid, strerror(errno));
  if (setuid(0) == 0 || getuid() != (uid_t)o->uid || getegid() != (gid_t)o->gid) fail("the identity drop did not hold");
}

/* chdir to cwd beneath cwd_root one component at a time, never following a symlink (no check-then-use). */
static void enter_cwd(const struct options *o) {
  if (!o->cwd_root) return;
  int fd = open(o->cwd_root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) fail("cannot open the project root %s: %s", o->cwd_root, strerror(errno));
  char *rel = strdup(o->cwd);
  if (!rel) fail("out of memory");
  char *save = NULL;
  for (char *part = strtok_r(rel, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
    if (strcmp(part, ".") == 0) continue;
    if (strcmp(part, "..") == 0) fail("cwd component \"..\" is not allowed in %s", o->cwd);
    int next = openat(fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      struct stat st;
      int is_link = fstatat(fd, part, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      fail("cwd component \"%s\" of %s %s", part, o->cwd, is_link ? "is a symlink; give the real directory" : strerror(errno));
    }
    close(fd);
    fd = next;
  }
  free(rel);
  if (fchdir(fd) != 0) fail("cannot enter %s: %s", o->cwd, strerror(errno));
  close(fd);
}

void run_program(const struct options *o, const sigset_t *original_mask) {
  if (setsid() < 0) fail("setsid: %s", strerror(errno));
  apply_agent_limits(o);
  if (o->tty) take_tty();
  int ruleset = build_ruleset(o);
  drop_identity(o);
  enter_cwd(o);
  if (ruleset >= 0) apply_ruleset(ruleset);
  sigprocmask(SIG_SETMASK, original_mask, NULL);
  execvp(o->program[0], o->program);
  fail("cannot run %s: %s", o->program[0], strerror(errno));
}
