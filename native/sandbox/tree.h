/* The tree: every process whose parent chain leads to the launcher (as a child subreaper, orphans are re-parented
   to it), reaped as it ends and ended as a whole when the launcher is told to stop or PROGRAM ends in the
   foreground. */
#ifndef URLBRIDGE_SANDBOX_TREE_H
#define URLBRIDGE_SANDBOX_TREE_H

#include <sys/types.h>

/* PROGRAM's pid (set by main after the fork), and its wait status once reaped (-1 until then). */
extern pid_t program_pid;
extern int program_status;

/* Reaps every exited child; remembers PROGRAM's status. Returns 1 once we have no children left. */
int reap(void);
/* SIGTERM every descendant, wait the grace, SIGKILL survivors until none is left. Returns leftovers (not PROGRAM). */
int end_tree(long grace_ms);

#endif
