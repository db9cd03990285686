/*
 * urlbridge-sandbox: runs one terminal command confined, and stays its parent until every process it started
 * has ended. Applies Landlock (filesystem allowlist, ptrace/proc protection, optional TCP-connect ban, signal and
 * abstract Unix socket scoping), no_new_privs and an identity drop, then watches the tree as a child subreaper so that setsid'd
 * daemons and double forks stay findable. It starts by closing every descriptor above 2 except --status-fd (itself
 * close-on-exec), so the command gets only stdin, stdout and stderr whoever started the launcher (the resident
 * spawner, or the bridge directly). CLI contract: docs/ARCHITECTURE.md and server/sandbox/launcher.ts.
 *
 * This file is the launcher's life: the probe, the start (descriptors, terminal, parent death, subreaper,
 * no_new_privs), the fork and the wait. Its parts are in sandbox/: the command line (options.c), the child up to
 * exec (child.c: agent-limits.c, tty.c, landlock.c), the tree (tree.c) and the status it reports (status.c).
 *
 * Build: scripts/build-native.mjs (cc -O2 -Wall -Wextra, this file and every .c in native/sandbox/; no external
 * libs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "close-fds.h"
#include "sandbox/child.h"
#include "sandbox/fail.h"
#include "sandbox/landlock.h"
#include "sandbox/options.h"
#include "sandbox/status.h"
#include "sandbox/tree.h"
#include "sandbox/tty.h"

/* Everything above stdio but the status fd: whatever the parent left inheritable (a runtime's IPC channel, a
   test runner's pipes) reaches neither the launcher's work nor the command, however the launcher was started. */
static void close_inherited(int status_fd) {
  if (status_fd < 0) {
    close_between(3, INT_MAX);
    return;
  }
  close_between(3, status_fd - 1);
  close_between(status_fd + 1, INT_MAX);
}

static int probe(void) {
  int abi = landlock_abi();
  printf("{\"landlock\":%d,\"fs\":%s,\"ptrace\":%s,\"net\":%s,\"signals\":%s,\"abstractSockets\":%s,\"agentLimits\":true,\"root\":%s}\n", abi,
         abi >= 1 ? "true" : "false", abi >= 1 ? "true" : "false", abi >= 4 ? "true" : "false", abi >= 6 ? "true" : "false",
         abi >= 6 ? "true" : "false", geteuid() == 0 ? "true" : "false");
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--probe") == 0) return probe();
  struct options o;
  parse_args(argc, argv, &o);
  if (o.status_fd >= 0 && fcntl(o.status_fd, F_SETFD, FD_CLOEXEC) != 0) fail("--status-fd %d is not open", o.status_fd);
  close_inherited(o.status_fd);
  if (o.tty) release_tty();

  /* The bridge dying ends the tree: SIGTERM arrives here and is handled like any stop request. */
  pid_t parent = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) fail("PR_SET_PDEATHSIG: %s", strerror(errno));
  if (getppid() != parent) fail("the parent exited before the launcher started");
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) fail("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("PR_SET_NO_NEW_PRIVS: %s", strerror(errno));

  sigset_t wanted, original;
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGTERM);
  sigaddset(&wanted, SIGINT);
  sigaddset(&wanted, SIGHUP);
  sigaddset(&wanted, SIGCHLD);
  sigprocmask(SIG_BLOCK, &wanted, &original);

  program_pid = fork();
  if (program_pid < 0) fail("fork: %s", strerror(errno));
  if (program_pid == 0) run_program(&o, &original);

  for (;;) {
    int sig = sigwaitinfo(&wanted, NULL);
    if (sig < 0) {
      if (errno == EINTR) continue;
      fail("sigwaitinfo: %s", strerror(errno));
    }
    if (sig == SIGCHLD) {
      int none_left = reap();
      if (program_status == -1) continue;
      if (none_left) return finish(&o, 0);
      /* PROGRAM is done but left processes behind: a foreground run ends them, a background run waits. */
      if (o.foreground) return finish(&o, end_tree(o.grace_ms));
      continue;
    }
    return finish(&o, end_tree(o.grace_ms));
  }
}
