/* Closing inherited descriptors, shared by the launcher (urlbridge-sandbox.c) and the resident spawner
   (urlbridge-spawner.c): close_range(2) where the kernel has it (Linux 5.9), else one by one from /proc/self/fd. */
#ifndef URLBRIDGE_CLOSE_FDS_H
#define URLBRIDGE_CLOSE_FDS_H

#include <dirent.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_close_range
#define __NR_close_range 436
#endif

/* Closes every descriptor from `lowest` to `highest`, both included (highest INT_MAX: every one from lowest up). */
static void close_between(int lowest, int highest) {
  if (lowest > highest) return;
  if (syscall(__NR_close_range, (unsigned)lowest, (unsigned)highest, 0) == 0) return;
  DIR *dir = opendir("/proc/self/fd");
  if (!dir) return;
  int own = dirfd(dir);
  struct dirent *e;
  while ((e = readdir(dir)))
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9') {
      int fd = atoi(e->d_name);
      if (fd >= lowest && fd <= highest && fd != own) close(fd);
    }
  closedir(dir);
}

#endif
