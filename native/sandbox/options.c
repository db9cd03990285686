/* parse_args(): see options.h. */
#define _GNU_SOURCE
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"

static long parse_number(const char *flag, const char *text, long min, long max) {
  char *end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno || !end || *end || value < min || value > max) fail("%s wants a number from %ld to %ld, got \"%s\"", flag, min, max, text);
  return value;
}

void parse_args(int argc, char **argv, struct options *o) {
  memset(o, 0, sizeof *o);
  o->uid = o->gid = -1;
  o->status_fd = -1;
  o->grace_ms = DEFAULT_GRACE_MS;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    int takes = strcmp(a, "--ro") == 0 || strcmp(a, "--rw") == 0 || strcmp(a, "--rw-dev") == 0 || strcmp(a, "--uid") == 0 ||
                strcmp(a, "--gid") == 0 || strcmp(a, "--cwd-root") == 0 || strcmp(a, "--cwd") == 0 ||
                strcmp(a, "--status-fd") == 0 || strcmp(a, "--grace-ms") == 0 || strcmp(a, "--max-file-size") == 0;
    if (takes && !next) fail("%s needs a value", a);
    if (strcmp(a, "--ro") == 0 || strcmp(a, "--rw") == 0 || strcmp(a, "--rw-dev") == 0) {
      if (o->npaths >= MAX_PATHS) fail("more than %d paths", MAX_PATHS);
      o->paths[o->npaths].path = next;
      o->paths[o->npaths].kind = strcmp(a, "--ro") == 0 ? PATH_RO : strcmp(a, "--rw") == 0 ? PATH_RW : PATH_DEV;
      o->npaths++;
      i++;
    } else if (strcmp(a, "--uid") == 0) {
      o->uid = parse_number(a, next, 1, 0x7fffffff);
      i++;
    } else if (strcmp(a, "--gid") == 0) {
      o->gid = parse_number(a, next, 1, 0x7fffffff);
      i++;
    } else if (strcmp(a, "--cwd-root") == 0) {
      o->cwd_root = next;
      i++;
    } else if (strcmp(a, "--cwd") == 0) {
      o->cwd = next;
      i++;
    } else if (strcmp(a, "--status-fd") == 0) {
      o->status_fd = (int)parse_number(a, next, 3, 1023);
      i++;
    } else if (strcmp(a, "--grace-ms") == 0) {
      o->grace_ms = parse_number(a, next, 0, 600000);
      i++;
    } else if (strcmp(a, "--max-file-size") == 0) {
      o->max_file_size = parse_number(a, next, 1, LONG_MAX);
      i++;
    } else if (strcmp(a, "--scope-signals") == 0) {
      o->scope_signals = 1;
    } else if (strcmp(a, "--scope-abstract-sockets") == 0) {
      o->scope_abstract = 1;
    } else if (strcmp(a, "--no-tcp-connect") == 0) {
      o->no_tcp_connect = 1;
    } else if (strcmp(a, "--require-landlock") == 0) {
      o->require_landlock = 1;
    } else if (strcmp(a, "--foreground") == 0) {
      o->foreground = 1;
    } else if (strcmp(a, "--tty") == 0) {
      o->tty = 1;
    } else {
      fail("unknown option \"%s\"; options end with -- before the program", a);
    }
  }
  if (i >= argc) fail("no program given: urlbridge-sandbox [options] -- PROGRAM [ARGS...]");
  o->program = &argv[i];
  if ((o->uid < 0) != (o->gid < 0)) fail("--uid and --gid go together");
  if ((o->cwd_root == NULL) != (o->cwd == NULL)) fail("--cwd-root and --cwd go together");
}
