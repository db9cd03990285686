/*
 * urlbridge-spawner: a small resident process that starts the sandbox launcher (urlbridge-sandbox) for the
 * bridge, so that the bridge never fork()s its own large address space per command (Node starts every child
 * with a plain fork, which copies the parent's page tables: ~4.5 ms per 100 MiB of bridge). Protocol and
 * lifetime: server/sandbox/spawner.ts and docs/ARCHITECTURE.md.
 *
 * Usage: urlbridge-spawner BRIDGE_PID LAUNCHER. It dies with the bridge (PR_SET_PDEATHSIG SIGKILL, checked
 * against BRIDGE_PID), and every launcher it starts dies with it (the launcher's own parent-death signal, which
 * makes the launcher end its tree). It only ever executes LAUNCHER, and only on requests that arrive through a
 * pipe that the bridge alone opened (see "ready" below), with the bridge's own authority; it adds no path.
 *
 * Channels:
 *   fd 1 (events, to the bridge): "ready <request-fd> <reply-fd>\n" once, then "x <id> <code> <signo> <status>\n"
 *     per launcher reaped (code -1 when killed by signo; status is the launcher's --status-fd line, or empty).
 *   request pipe (from the bridge): frames of a 4-byte little-endian length and a payload of NUL-terminated
 *     fields: "s" id cwd argc argv... envc env...  |  "k" id signo  |  "r" id. The bridge opens its write end
 *     as /proc/<spawner>/fd/<request-fd>; the spawner closes its own copy on the first frame.
 *   reply pipe (to the bridge, read synchronously): one line per "s": "<pid> <stdout-fd> <stderr-fd>\n" or
 *     "E <message>\n". The bridge opens the two output pipes' read ends as /proc/<spawner>/fd/<n> (so the shell
 *     writes to real pipes) and then sends "r" so the spawner closes its copies.
 *
 * Build: scripts/build-native.mjs (cc -O2 -Wall -Wextra, no external libs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "close-fds.h"

#define LAUNCHER_ERROR 125
/* A start request's size bound (argv of a long Landlock allowlist plus a scrubbed environment). */
#define MAX_FRAME (4 << 20)
#define MAX_FIELDS 65536
/* The launcher's --status-fd in every command (server/mutation/terminal/terminal-spawn.ts STATUS_FD). */
#define STATUS_FD 3

struct command {
  uint32_t id;
  pid_t pid; /* 0 once reaped */
  int out_r, err_r, status_r; /* -1 once closed */
};

static struct command *commands;
static size_t ncommands, capcommands;
static const char *launcher;
static int request_fd = -1, reply_fd = -1, bridge_request_w = -1, bridge_reply_r = -1;

static void die(const char *what) {
  fprintf(stderr, "urlbridge-spawner: %s: %s\n", what, strerror(errno));
  _exit(LAUNCHER_ERROR);
}

static void write_all(int fd, const char *text, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, text, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(0); /* the bridge is gone: nothing left to serve */
    text += n;
    len -= (size_t)n;
  }
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static struct command *find(uint32_t id) {
  for (size_t i = 0; i < ncommands; i++)
    if (commands[i].id == id) return &commands[i];
  return NULL;
}

/* Forgets a command once it is reaped and the bridge has its output pipes. */
static void forget_if_done(struct command *c) {
  if (c->pid != 0 || c->out_r >= 0 || c->err_r >= 0) return;
  *c = commands[--ncommands];
}

/* In the child: stdio onto the pipes, default signals, its own session, cwd, then the launcher. Never returns. */
static void exec_launcher(int out_w, int err_w, int status_w, const char *cwd, char **argv, char **envp) {
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0 || dup2(status_w, STATUS_FD) < 0) _exit(LAUNCHER_ERROR);
  /* Every other descriptor of ours is O_CLOEXEC already; closing them here as well costs one syscall. */
  close_between(STATUS_FD + 1, INT_MAX);
  sigset_t none;
  sigemptyset(&none);
  for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (setsid() < 0) _exit(LAUNCHER_ERROR);
  if (chdir(cwd) != 0) {
    dprintf(2, "urlbridge-sandbox: cannot enter %s: %s\n", cwd, strerror(errno));
    _exit(LAUNCHER_ERROR);
  }
  execve(launcher, argv, envp);
  dprintf(2, "urlbridge-sandbox: cannot run %s: %s\n", launcher, strerror(errno));
  _exit(LAUNCHER_ERROR);
}

static void reply(const char *line) { write_all(reply_fd, line, strlen(line)); }

static void start(uint32_t id, char **fields, size_t nfields) {
  /* fields: cwd argc argv... envc env... */
  char line[160];
  if (nfields < 3) return reply("E malformed start request\n");
  const char *cwd = fields[0];
  long argc = strtol(fields[1], NULL, 10);
  if (argc < 1 || (size_t)argc + 3 > nfields) return reply("E malformed start request\n");
  long envc = strtol(fields[2 + argc], NULL, 10);
  if (envc < 0 || (size_t)(argc + envc + 3) != nfields) return reply("E malformed start request\n");
  char **argv = calloc((size_t)argc + 1, sizeof *argv), **envp = calloc((size_t)envc + 1, sizeof *envp);
  if (!argv || !envp) die("out of memory");
  for (long i = 0; i < argc; i++) argv[i] = fields[2 + i];
  for (long i = 0; i < envc; i++) envp[i] = fields[3 + argc + i];
  int out[2], err[2], status[2];
  if (pipe2(out, O_CLOEXEC) != 0) goto failed;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]), close(out[1]);
    goto failed;
  }
  if (pipe2(status, O_CLOEXEC) != 0) {
    close(out[0]), close(out[1]), close(err[0]), close(err[1]);
    goto failed;
  }
  pid_t pid = fork();
  if (pid == 0) exec_launcher(out[1], err[1], status[1], cwd, argv, envp);
  close(out[1]), close(err[1]), close(status[1]);
  free(argv), free(envp);
  if (pid < 0) {
    close(out[0]), close(err[0]), close(status[0]);
    snprintf(line, sizeof line, "E fork: %s\n", strerror(errno));
    return reply(line);
  }
  fcntl(status[0], F_SETFL, O_NONBLOCK);
  if (ncommands == capcommands) {
    capcommands = capcommands ? capcommands * 2 : 64;
    commands = realloc(commands, capcommands * sizeof *commands);
    if (!commands) die("out of memory");
  }
  commands[ncommands++] = (struct command){.id = id, .pid = pid, .out_r = out[0], .err_r = err[0], .status_r = status[0]};
  snprintf(line, sizeof line, "%d %d %d\n", (int)pid, out[0], err[0]);
  return reply(line);
failed:
  free(argv), free(envp);
  snprintf(line, sizeof line, "E pipe: %s\n", strerror(errno));
  reply(line);
}

/* Reaps every exited launcher and reports it with its status line. */
static void reap(void) {
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    struct command *c = NULL;
    for (size_t i = 0; i < ncommands; i++)
      if (commands[i].pid == pid) c = &commands[i];
    if (!c) continue;
    char text[512] = "";
    ssize_t len = read(c->status_r, text, sizeof text - 1);
    text[len > 0 ? len : 0] = '\0';
    char *nl = strchr(text, '\n');
    if (nl) *nl = '\0';
    close_fd(&c->status_r);
    char line[700];
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1, signo = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    snprintf(line, sizeof line, "x %u %d %d %s\n", c->id, code, signo, text);
    c->pid = 0;
    forget_if_done(c);
    write_all(1, line, strlen(line));
  }
}

/* Splits a payload into its NUL-terminated fields; returns how many (0 when malformed). */
static size_t split(char *payload, size_t len, char **fields) {
  if (len == 0 || payload[len - 1] != '\0') return 0;
  size_t n = 0;
  for (size_t at = 0; at < len && n < MAX_FIELDS; n++) {
    fields[n] = payload + at;
    at += strlen(payload + at) + 1;
  }
  return n;
}

static void handle(char *payload, size_t len) {
  static char *fields[MAX_FIELDS];
  size_t n = split(payload, len, fields);
  if (n < 2) return;
  uint32_t id = (uint32_t)strtoul(fields[1], NULL, 10);
  if (strcmp(fields[0], "s") == 0) return start(id, fields + 2, n - 2);
  struct command *c = find(id);
  if (!c) return;
  if (strcmp(fields[0], "k") == 0 && n == 3) {
    /* Only a launcher not yet reaped: its pid cannot have been reused by another process. */
    if (c->pid != 0) kill(c->pid, (int)strtol(fields[2], NULL, 10));
  } else if (strcmp(fields[0], "r") == 0) {
    close_fd(&c->out_r);
    close_fd(&c->err_r);
    forget_if_done(c);
  }
}

static char *buffer;
static size_t buffered, capbuffer;

/* Reads what the request pipe holds and handles every whole frame; returns 0 at end of file. */
static int read_requests(void) {
  if (capbuffer - buffered < 65536) {
    capbuffer = capbuffer ? capbuffer * 2 : 131072;
    if (capbuffer > 2 * (size_t)MAX_FRAME + 65536) die("request too large");
    buffer = realloc(buffer, capbuffer);
    if (!buffer) die("out of memory");
  }
  ssize_t n = read(request_fd, buffer + buffered, capbuffer - buffered);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return 0;
  if (bridge_request_w >= 0) {
    /* The first frame proves the bridge opened both pipes: drop our copies of its ends. */
    close_fd(&bridge_request_w);
    close_fd(&bridge_reply_r);
  }
  buffered += (size_t)n;
  size_t at = 0;
  while (buffered - at >= 4) {
    uint32_t len = (uint32_t)(unsigned char)buffer[at] | (uint32_t)(unsigned char)buffer[at + 1] << 8 |
                   (uint32_t)(unsigned char)buffer[at + 2] << 16 | (uint32_t)(unsigned char)buffer[at + 3] << 24;
    if (len > MAX_FRAME) {
      errno = EMSGSIZE;
      die("request frame");
    }
    if (buffered - at - 4 < len) break;
    handle(buffer + at + 4, len);
    at += 4 + len;
  }
  memmove(buffer, buffer + at, buffered - at);
  buffered -= at;
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fputs("usage: urlbridge-spawner BRIDGE_PID LAUNCHER\n", stderr);
    return 2;
  }
  pid_t bridge = (pid_t)strtol(argv[1], NULL, 10);
  launcher = argv[2];
  /* Dies with the bridge; its launchers then get their own parent-death signal and end their trees. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) die("PR_SET_PDEATHSIG");
  if (getppid() != bridge) {
    fputs("urlbridge-spawner: the bridge exited before the spawner started\n", stderr);
    return LAUNCHER_ERROR;
  }
  /* Nothing the bridge's process happened to leave inheritable (a tool's pipe, a runner's IPC) reaches commands. */
  close_between(3, INT_MAX);
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) die("signalfd");
  int request[2], replies[2];
  if (pipe2(request, O_CLOEXEC) != 0 || pipe2(replies, O_CLOEXEC) != 0) die("pipe2");
  request_fd = request[0], bridge_request_w = request[1];
  reply_fd = replies[1], bridge_reply_r = replies[0];
  if (fcntl(1, F_SETFD, FD_CLOEXEC) != 0 || fcntl(2, F_SETFD, FD_CLOEXEC) != 0) die("fcntl");
  char ready[64];
  snprintf(ready, sizeof ready, "ready %d %d\n", bridge_request_w, bridge_reply_r);
  write_all(1, ready, strlen(ready));

  struct pollfd fds[2] = {{.fd = request_fd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
  for (;;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (fds[1].revents & POLLIN) {
      struct signalfd_siginfo info;
      while (read(sfd, &info, sizeof info) == sizeof info) {
      }
      reap();
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      /* End of file: the bridge closed its end (or died); the launchers' parent-death signal ends their trees. */
      if (!read_requests()) return 0;
    }
  }
}
