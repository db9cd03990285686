# Test-only attacker process for containment-race.test.ts: swaps each given pair of names with renameat2
# RENAME_EXCHANGE as fast as it can, until SIGTERM or its deadline, then restores every pair's original state.
# Usage: flipper.py DEADLINE_SECONDS A1 B1 [A2 B2 ...]; prints "ready" once, then the exchange count at the end.
import ctypes
import os
import signal
import sys
import time

AT_FDCWD = -100
RENAME_EXCHANGE = 2
SYS_RENAMEAT2 = {"x86_64": 316, "aarch64": 276}.get(os.uname().machine)

libc = ctypes.CDLL(None, use_errno=True)
stop = False


def on_term(_signum, _frame):
    global stop
    stop = True


def exchange(a, b):
    if hasattr(libc, "renameat2"):
        rc = libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    else:
        rc = libc.syscall(SYS_RENAMEAT2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def main():
    deadline = time.monotonic() + float(sys.argv[1])
    names = [os.fsencode(n) for n in sys.argv[2:]]
    pairs = list(zip(names[0::2], names[1::2]))
    signal.signal(signal.SIGTERM, on_term)
    print("ready", flush=True)
    count = 0
    while not stop:
        for a, b in pairs:
            exchange(a, b)
        count += 1
        if count % 512 == 0 and time.monotonic() > deadline:
            break
    # An odd count leaves every pair swapped: one more exchange puts the originals back.
    if count % 2 == 1:
        for a, b in pairs:
            exchange(a, b)
        count += 1
    print(count, flush=True)


main()
