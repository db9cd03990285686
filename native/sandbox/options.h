/* The launcher's command line: urlbridge-sandbox [options] -- PROGRAM [ARGS...] (server/sandbox/launcher.ts
   writes it). Every malformed option is refused with fail(), naming the option at fault. */
#ifndef URLBRIDGE_SANDBOX_OPTIONS_H
#define URLBRIDGE_SANDBOX_OPTIONS_H

#define MAX_PATHS 4096
#define DEFAULT_GRACE_MS 1500

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

void parse_args(int argc, char **argv, struct options *o);

#endif
