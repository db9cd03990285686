/* fail(): see fail.h. */
#define _GNU_SOURCE
#include "fail.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("urlbridge-sandbox: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  _exit(LAUNCHER_ERROR);
}
