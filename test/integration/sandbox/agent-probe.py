# Test-only attacker process for agent-attacks.test.ts, run as an agent's terminal command: for each NAME=PID
# given, tries what a hostile command would against that process (list /proc/PID/fd, read environ and mem,
# open each /proc/PID/fd/N for writing and send a spawner start frame into it, ptrace it, signal it), then the
# same on a child of its own as the positive control, and lists the descriptors it inherited. Prints one JSON line.
import ctypes
import errno
import json
import os
import signal
import sys

PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
libc = ctypes.CDLL(None, use_errno=True)
# A spawner start request (native/urlbridge-spawner.c): run /bin/sh as the launcher's argv, with no arguments.
FIELDS = [b"s", b"1", b"/", b"2", b"urlbridge-sandbox", b"--no-landlock", b"0"]
FRAME = b"".join(f + b"\0" for f in FIELDS)
FRAME = len(FRAME).to_bytes(4, "little") + FRAME


def outcome(action):
    try:
        action()
        return "ok"
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))


def ptrace(pid):
    if libc.ptrace(PTRACE_SEIZE, pid, None, None) == 0:
        libc.ptrace(PTRACE_DETACH, pid, None, None)
        return "ok"
    return errno.errorcode.get(ctypes.get_errno(), "?")


def writable_fds(pid):
    opened = 0
    for n in range(256):
        try:
            fd = os.open(f"/proc/{pid}/fd/{n}", os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue
        opened += 1
        try:
            os.write(fd, FRAME)
        except OSError:
            pass
        os.close(fd)
    return opened


def probe(pid):
    return {
        "fdList": outcome(lambda: os.listdir(f"/proc/{pid}/fd")),
        "fdLink": outcome(lambda: os.readlink(f"/proc/{pid}/fd/0")),
        "environ": outcome(lambda: open(f"/proc/{pid}/environ", "rb").read()),
        "mem": outcome(lambda: os.close(os.open(f"/proc/{pid}/mem", os.O_RDONLY))),
        "cmdline": outcome(lambda: open(f"/proc/{pid}/cmdline", "rb").read()),
        "writableFds": writable_fds(pid),
        "ptrace": ptrace(pid),
        "signal": outcome(lambda: os.kill(pid, 0)),
    }


result = {name: probe(int(pid)) for name, pid in (arg.split("=") for arg in sys.argv[1:])}
child = os.fork()
if child == 0:
    signal.pause()
    os._exit(0)
result["ownChild"] = {"fdList": outcome(lambda: os.listdir(f"/proc/{child}/fd")), "environ": outcome(lambda: open(f"/proc/{child}/environ", "rb").read()), "ptrace": ptrace(child)}
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
inherited = {}
for n in sorted(os.listdir("/proc/self/fd")):
    try:
        inherited[n] = os.readlink(f"/proc/self/fd/{n}")
    except OSError:
        pass  # the listing's own descriptor, closed by now
result["inherited"] = inherited
print(json.dumps(result))
