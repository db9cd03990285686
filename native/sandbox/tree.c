/* The tree (tree.h), found through /proc/<pid>/task/<tid>/children from ourselves down; the scan of all of /proc
   is the fallback for kernels without those files. */
#define _GNU_SOURCE
#include "tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fail.h"

/* Processes one walk of the tree lists at most (a pids limit bounds a real tree far below this). */
#define MAX_TREE (1 << 20)
/* SIGKILL rounds before giving up on a tree that keeps forking (a pids limit bounds it in practice). */
#define MAX_KILL_ROUNDS 4000

pid_t program_pid;
int program_status = -1;

struct proc_list {
  pid_t *pid, *ppid;
  char *zombie;
  size_t n, cap;
};

static void proc_list_push(struct proc_list *l, pid_t pid, pid_t ppid, char zombie) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 256;
    l->pid = realloc(l->pid, l->cap * sizeof *l->pid);
    l->ppid = realloc(l->ppid, l->cap * sizeof *l->ppid);
    l->zombie = realloc(l->zombie, l->cap);
    if (!l->pid || !l->ppid || !l->zombie) fail("out of memory");
  }
  l->pid[l->n] = pid;
  l->ppid[l->n] = ppid;
  l->zombie[l->n] = zombie;
  l->n++;
}

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
    proc_list_push(l, (pid_t)atoi(e->d_name), (pid_t)ppid, state == 'Z');
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
        proc_list_push(l, (pid_t)atoi(number), pid, 0);
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

int reap(void) {
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

int end_tree(long grace_ms) {
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
