/* finish(): see status.h. */
#define _GNU_SOURCE
#include "status.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fail.h"
#include "tree.h"

static const char *signal_name(int sig) {
  static const struct { int sig; const char *name; } names[] = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"},
      {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},
      {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
      {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].sig == sig) return names[i].name;
  return "SIGUNKNOWN";
}

int finish(const struct options *o, int leftovers) {
  int code = LAUNCHER_ERROR;
  char line[160];
  if (program_status == -1) {
    snprintf(line, sizeof line, "{\"exitCode\":null,\"signal\":null,\"leftovers\":%d}\n", leftovers);
  } else if (WIFSIGNALED(program_status)) {
    code = 128 + WTERMSIG(program_status);
    snprintf(line, sizeof line, "{\"exitCode\":null,\"signal\":\"%s\",\"leftovers\":%d}\n", signal_name(WTERMSIG(program_status)), leftovers);
  } else {
    code = WEXITSTATUS(program_status);
    snprintf(line, sizeof line, "{\"exitCode\":%d,\"signal\":null,\"leftovers\":%d}\n", code, leftovers);
  }
  if (o->status_fd >= 0 && write(o->status_fd, line, strlen(line)) < 0) {
    /* The bridge went away; the exit code still tells what happened. */
  }
  return code;
}
