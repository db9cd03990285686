/* --tty: the launcher hands the bridge's PTY on to PROGRAM's session, so that Ctrl-C, job control and SIGWINCH
   reach the command's foreground group and never the launcher, whose SIGINT ends the tree. */
#ifndef URLBRIDGE_SANDBOX_TTY_H
#define URLBRIDGE_SANDBOX_TTY_H

/* In the launcher: gives up the terminal its session leads. */
void release_tty(void);
/* In PROGRAM's new session: makes the terminal its controlling terminal. */
void take_tty(void);

#endif
