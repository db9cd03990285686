/* Landlock confinement: see landlock.h. The ABI constants are defined here, not taken from <linux/landlock.h>, so
   that an older libc's headers (Debian bookworm ships ABI 3) still build a launcher that uses what the running
   kernel offers. */
#define _GNU_SOURCE
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fail.h"

/* --- Landlock ABI (include/uapi/linux/landlock.h), defined locally on purpose (see above). */
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

int landlock_abi(void) {
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

int build_ruleset(const struct options *o) {
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

void apply_ruleset(int ruleset) {
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) fail("cannot apply the Landlock ruleset: %s", strerror(errno));
  close(ruleset);
}
