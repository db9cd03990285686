/*
 * urlbridge-sandbox: runs one terminal command confined, and stays its parent until every process it started
 * has ended. Applies Landlock (filesystem allowlist, ptrace/proc protection, optional TCP-connect ban, signal and
 * abstract Unix socket scoping), no_new_privs and an identity drop, then watches the tree as a child subreaper so that setsid'd
 * daemons and double forks stay findable. It starts by closing every descriptor above 2 except --status-fd (itself
 * close-on-exec), so the command gets only stdin, stdout and stderr whoever started the launcher (the resident
 * spawner, or the bridge directly). CLI contract: docs/ARCHITECTURE.md and server/sandbox/launcher.ts.
 *
 * Build: cc -O2 -Wall -Wextra -o dist/native/urlbridge-sandbox native/urlbridge-sandbox.c (no external libs).
 * The Landlock ABI constants are defined here, not taken from <linux/landlock.h>, so that an older libc's
 * headers (Debian bookworm ships ABI 3) still build a launcher that uses what the running kernel offers.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "close-fds.h"

/* --- Landlock ABI (include/uapi/linux/landlock.h), defined locally on purpose (see header). */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)    /* ABI 6 */

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

/* Rights that apply to a non-directory; Landlock rejects directory-only rights on a file rule. */
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_RO_RIGHTS (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)
/* Everything but making device nodes (which needs CAP_MKNOD anyway). */
#define LL_RW_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_REMOVE_DIR | \
                      LL_FS_REMOVE_FILE | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO | \
                      LL_FS_MAKE_SYM | LL_FS_REFER | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_DEV_RIGHTS (LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

#define LAUNCHER_ERROR 125
#define MAX_PATHS 4096
#define DEFAULT_GRACE_MS 1500
/* SIGKILL rounds before giving up on a tree that keeps forking (a pids limit bounds it in practice). */
#define MAX_KILL_ROUNDS 4000
/* Processes one walk of the tree lists at most (a pids limit bounds a real tree far below this). */
#define MAX_TREE (1 << 20)

enum path_kind { PATH_RO, PATH_RW, PATH_DEV };

struct rule_path {
  const char *path;
  enum path_kind kind;
};

struct options {
  struct rule_path paths[MAX_PATHS];
  int npaths;
  int scope_signals;
  /* Abstract Unix sockets (@name) carry no file permission: without this scope any command reaches any of them. */
  int scope_abstract;
  int no_tcp_connect;
  int require_landlock;
  int foreground;
  /* --tty: stdin is a terminal this launcher's session controls (the bridge's PTY); PROGRAM's session gets it. */
  int tty;
  long uid, gid;
  const char *cwd_root, *cwd;
  int status_fd;
  long grace_ms;
  /* RLIMIT_FSIZE for the command and its descendants, in bytes; 0 leaves the inherited limit. */
  long long max_file_size;
  char **program;
};

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("urlbridge-sandbox: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  _exit(LAUNCHER_ERROR);
}

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

static int landlock_abi(void) {
  long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : (int)abi;
}

/* The filesystem rights this ABI can restrict (best-effort downgrade, as the kernel documentation shows). */
static uint64_t handled_fs_for(int abi) {
  uint64_t fs = LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_REMOVE_DIR |
                LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK |
                LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM | LL_FS_REFER | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV;
  if (abi < 2) fs &= ~LL_FS_REFER;
  if (abi < 3) fs &= ~LL_FS_TRUNCATE;
  if (abi < 5) fs &= ~LL_FS_IOCTL_DEV;
  return fs;
}

static long parse_number(const char *flag, const char *text, long min, long max) {
  char *end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno || !end || *end || value < min || value > max) fail("%s wants a number from %ld to %ld, got \"%s\"", flag, min, max, text);
  return value;
}

static void parse_args(int argc, char **argv, struct options *o) {
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

static void add_path_rule(int ruleset, const struct rule_path *p, uint64_t handled) {
  int fd = open(p->path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT && p->kind != PATH_RW) return; /* optional system paths */
    fail("cannot open %s: %s", p->path, strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) fail("cannot stat %s: %s", p->path, strerror(errno));
  uint64_t rights = p->kind == PATH_RO ? LL_RO_RIGHTS : p->kind == PATH_RW ? LL_RW_RIGHTS : LL_DEV_RIGHTS;
  if (!S_ISDIR(st.st_mode)) rights &= LL_FILE_RIGHTS;
  if (p->kind == PATH_DEV && !S_ISCHR(st.st_mode)) fail("--rw-dev %s is not a character device", p->path);
  struct ll_path_beneath_attr attr = {.allowed_access = rights & handled, .parent_fd = fd};
  if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &attr, 0) != 0)
    fail("cannot add a Landlock rule for %s: %s", p->path, strerror(errno));
  close(fd);
}

/* Builds the ruleset; returns its fd, or -1 when Landlock is unavailable and not required. */
static int build_ruleset(const struct options *o) {
  /* Nothing to confine to: the launcher only owns the tree (URLBRIDGE_SANDBOX=none, process-level tests). */
  if (o->npaths == 0 && !o->require_landlock && !o->scope_signals && !o->scope_abstract && !o->no_tcp_connect) return -1;
  int abi = landlock_abi();
  if (abi == 0) {
    if (o->require_landlock) fail("Landlock is not available on this kernel (needs Linux 5.13+ with landlock in the lsm= list)");
    if (o->scope_signals || o->scope_abstract || o->no_tcp_connect)
      fail("--scope-signals, --scope-abstract-sockets and --no-tcp-connect need Landlock, which this kernel lacks");
    return -1;
  }
  if (o->scope_signals && abi < 6) fail("--scope-signals needs Landlock ABI 6 (Linux 6.12); this kernel has ABI %d", abi);
  if (o->scope_abstract && abi < 6) fail("--scope-abstract-sockets needs Landlock ABI 6 (Linux 6.12); this kernel has ABI %d", abi);
  if (o->no_tcp_connect && abi < 4) fail("--no-tcp-connect needs Landlock ABI 4 (Linux 6.7); this kernel has ABI %d", abi);
  struct ll_ruleset_attr attr = {.handled_access_fs = handled_fs_for(abi),
                                 .handled_access_net = o->no_tcp_connect ? LL_NET_CONNECT_TCP : 0,
                                 .scoped = (o->scope_signals ? LL_SCOPE_SIGNAL : 0) | (o->scope_abstract ? LL_SCOPE_ABSTRACT_UNIX_SOCKET : 0)};
  /* Older ABIs know a shorter struct; the size tells the kernel which fields we mean. */
  size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
  int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0) fail("cannot create a Landlock ruleset: %s", strerror(errno));
  for (int i = 0; i < o->npaths; i++) add_path_rule(ruleset, &o->paths[i], attr.handled_access_fs);
  return ruleset;
}

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

/* Agent limits (issue 28): the kernel's OOM killer picks the command's processes before anything else (raising
   one's own oom_score_adj needs no privilege; descendants inherit it), and no file it writes grows past
   --max-file-size (soft and hard limit alike, so the command cannot raise it; past it the write fails with EFBIG
   or SIGXFSZ ends the writer). */
#define AGENT_OOM_SCORE_ADJ "1000"
static void apply_agent_limits(const struct options *o) {
  int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, AGENT_OOM_SCORE_ADJ, strlen(AGENT_OOM_SCORE_ADJ)) < 0)
    fail("cannot raise oom_score_adj to %s: %s", AGENT_OOM_SCORE_ADJ, strerror(errno));
  close(fd);
  if (o->max_file_size > 0) {
    struct rlimit limit = {.rlim_cur = (rlim_t)o->max_file_size, .rlim_max = (rlim_t)o->max_file_size};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) fail("cannot set RLIMIT_FSIZE to %lld: %s", o->max_file_size, strerror(errno));
  }
}

/* --tty: the PTY's opener made us its session leader; give the terminal up (ignoring the SIGHUP that sends us) so
   PROGRAM's new session can take it, and a Ctrl-C typed there never reaches the launcher, whose SIGINT ends the tree. */
static void release_tty(void) {
  if (!isatty(STDIN_FILENO)) fail("--tty: stdin is not a terminal");
  struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGHUP, &ignore, &old);
  if (ioctl(STDIN_FILENO, TIOCNOTTY) != 0) fail("--tty: cannot release the terminal: %s", strerror(errno));
  sigaction(SIGHUP, &old, NULL);
}

/* In the child: confine, change identity, enter the directory, exec. Never returns. */
static void run_program(const struct options *o, const sigset_t *original_mask) {
  if (setsid() < 0) fail("setsid: %s", strerror(errno));
  apply_agent_limits(o);
  /* The terminal becomes the command's own: Ctrl-C, job control and SIGWINCH reach its foreground group. */
  if (o->tty && ioctl(STDIN_FILENO, TIOCSCTTY, 0) != 0) fail("cannot take the terminal: %s", strerror(errno));
  int ruleset = build_ruleset(o);
  drop_identity(o);
  enter_cwd(o);
  if (ruleset >= 0) {
    if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) fail("cannot apply the Landlock ruleset: %s", strerror(errno));
    close(ruleset);
  }
  sigprocmask(SIG_SETMASK, original_mask, NULL);
  execvp(o->program[0], o->program);
  fail("cannot run %s: %s", o->program[0], strerror(errno));
}

/* --- the tree: every process whose parent chain leads to us (as a subreaper, orphans are re-parented here).
   Found through /proc/<pid>/task/<tid>/children from ourselves down; the scan of all of /proc is the fallback
   for kernels without those files. */

struct proc_list {
  pid_t *pid, *ppid;
  char *zombie;
  size_t n, cap;
};

static void proc_scan(struct proc_list *l) {
  l->n = 0;
  DIR *dir = opendir("/proc");
  if (!dir) return;
  struct dirent *e;
  while ((e = readdir(dir))) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0) continue;
    buf[len] = '\0';
    char *close_paren = strrchr(buf, ')');
    char state;
    int ppid;
    if (!close_paren || sscanf(close_paren + 2, "%c %d", &state, &ppid) != 2) continue;
    if (l->n == l->cap) {
      l->cap = l->cap ? l->cap * 2 : 256;
      l->pid = realloc(l->pid, l->cap * sizeof *l->pid);
      l->ppid = realloc(l->ppid, l->cap * sizeof *l->ppid);
      l->zombie = realloc(l->zombie, l->cap);
      if (!l->pid || !l->ppid || !l->zombie) fail("out of memory");
    }
    l->pid[l->n] = (pid_t)atoi(e->d_name);
    l->ppid[l->n] = (pid_t)ppid;
    l->zombie[l->n] = state == 'Z';
    l->n++;
  }
  closedir(dir);
}

/* Appends the children of every thread of `pid` (/proc/<pid>/task/<tid>/children) to l. A process or thread
   that is gone meanwhile adds nothing. */
static void add_children_of(struct proc_list *l, pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *tasks = opendir(path);
  if (!tasks) return;
  struct dirent *t;
  while ((t = readdir(tasks))) {
    if (t->d_name[0] < '1' || t->d_name[0] > '9') continue;
    char file[300];
    snprintf(file, sizeof file, "/proc/%d/task/%s/children", (int)pid, t->d_name);
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[4096];
    ssize_t len;
    char number[16];
    size_t digits = 0;
    while ((len = read(fd, buf, sizeof buf)) > 0) {
      for (ssize_t i = 0; i < len; i++) {
        if (buf[i] >= '0' && buf[i] <= '9' && digits < sizeof number - 1) {
          number[digits++] = buf[i];
          continue;
        }
        if (digits == 0) continue;
        number[digits] = '\0';
        digits = 0;
        if (l->n == l->cap) {
          l->cap = l->cap ? l->cap * 2 : 256;
          l->pid = realloc(l->pid, l->cap * sizeof *l->pid);
          l->ppid = realloc(l->ppid, l->cap * sizeof *l->ppid);
          l->zombie = realloc(l->zombie, l->cap);
          if (!l->pid || !l->ppid || !l->zombie) fail("out of memory");
        }
        l->pid[l->n] = (pid_t)atoi(number);
        l->ppid[l->n] = pid;
        l->zombie[l->n] = 0;
        l->n++;
      }
    }
    close(fd);
  }
  closedir(tasks);
}

/* Whether the process is a zombie (exited, not yet reaped); a process that is gone counts as one. */
static int is_zombie(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  ssize_t len = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (len <= 0) return 1;
  buf[len] = '\0';
  char *close_paren = strrchr(buf, ')');
  return !close_paren || close_paren[1] == '\0' || close_paren[2] == 'Z' || close_paren[2] == 'X';
}

/* Our living descendants, found by walking the children files down from ourselves: the cost grows with the
   tree, not with the host's process count. Returns -1 when the kernel lacks the files. The list may miss a
   process forked mid-walk; end_tree copes, since as a subreaper we inherit whatever outlives its parent. */
static long walk_descendants(struct proc_list *l, pid_t **out) {
  char own[64];
  snprintf(own, sizeof own, "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
  if (access(own, R_OK) != 0) return -1;
  l->n = 0;
  add_children_of(l, getpid());
  /* l grows as we go: l->pid[head] is the next process whose children to add. */
  for (size_t head = 0; head < l->n && l->n < MAX_TREE; head++) add_children_of(l, l->pid[head]);
  *out = malloc((l->n + 1) * sizeof **out);
  if (!*out) fail("out of memory");
  size_t alive = 0;
  for (size_t k = 0; k < l->n; k++)
    if (!is_zombie(l->pid[k])) (*out)[alive++] = l->pid[k];
  return (long)alive;
}

/* Fills *out (allocated here, the caller frees it) with our living descendants; returns how many. */
static size_t descendants(struct proc_list *l, pid_t **out) {
  long walked = walk_descendants(l, out);
  if (walked >= 0) return (size_t)walked;
  proc_scan(l);
  *out = malloc((l->n + 1) * sizeof **out);
  if (!*out) fail("out of memory");
  pid_t *found = *out;
  size_t count = 0;
  pid_t self = getpid();
  /* Breadth-first from ourselves: found[] doubles as the queue. */
  for (size_t i = 0; i < l->n; i++)
    if (l->ppid[i] == self) found[count++] = l->pid[i];
  for (size_t head = 0; head < count; head++)
    for (size_t i = 0; i < l->n; i++)
      if (l->ppid[i] == found[head]) found[count++] = l->pid[i];
  size_t alive = 0;
  for (size_t k = 0; k < count; k++) {
    int zombie = 0;
    for (size_t i = 0; i < l->n; i++)
      if (l->pid[i] == found[k]) zombie = l->zombie[i];
    if (!zombie) found[alive++] = found[k];
  }
  return alive;
}

static pid_t program_pid;
static int program_status = -1;

/* Reaps every exited child; remembers PROGRAM's status. Returns 1 once we have no children left. */
static int reap(void) {
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      if (pid == program_pid) program_status = status;
      continue;
    }
    return pid < 0 && errno == ECHILD;
  }
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* SIGTERM every descendant, wait the grace, SIGKILL survivors until none is left. Returns leftovers (not PROGRAM). */
static int end_tree(long grace_ms) {
  struct proc_list l = {0};
  if (reap()) return 0;
  pid_t *pids = NULL;
  size_t n = descendants(&l, &pids);
  int leftovers = 0;
  for (size_t i = 0; i < n; i++) {
    leftovers += pids[i] != program_pid;
    kill(pids[i], SIGTERM);
    kill(pids[i], SIGCONT);
  }
  double deadline = now_ms() + grace_ms;
  while (n > 0 && now_ms() < deadline) {
    sleep_ms(10);
    if (reap()) break;
    free(pids);
    n = descendants(&l, &pids);
  }
  for (int round = 0; round < MAX_KILL_ROUNDS && !reap(); round++) {
    free(pids);
    n = descendants(&l, &pids);
    if (n == 0) {
      sleep_ms(1); /* only zombies left: they are reaped on the next round */
      continue;
    }
    for (size_t i = 0; i < n; i++) kill(pids[i], SIGKILL);
    sleep_ms(2);
  }
  free(pids);
  free(l.pid);
  free(l.ppid);
  free(l.zombie);
  return leftovers;
}

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

static int finish(const struct options *o, int leftovers) {
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
