/* release_tty() and take_tty(): see tty.h. */
#define _GNU_SOURCE
#include "tty.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fail.h"

/* --tty: the PTY's opener made us its session leader; give the terminal up (ignoring the SIGHUP that sends us) so
   PROGRAM's new session can take it, and a Ctrl-C typed there never reaches the launcher, whose SIGINT ends the tree. */
void release_tty(void) {
  if (!isatty(STDIN_FILENO)) fail("--tty: stdin is not a terminal");
  struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGHUP, &ignore, &old);
  if (ioctl(STDIN_FILENO, TIOCNOTTY) != 0) fail("--tty: cannot release the terminal: %s", strerror(errno));
  sigaction(SIGHUP, &old, NULL);
}

/* The terminal becomes the command's own: Ctrl-C, job control and SIGWINCH reach its foreground group. */
void take_tty(void) {
  if (ioctl(STDIN_FILENO, TIOCSCTTY, 0) != 0) fail("cannot take the terminal: %s", strerror(errno));
}
