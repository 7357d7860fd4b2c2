"""Free loopback ports for the test scripts that write node addresses themselves.

Reserved as `boreal launch --free-ports` reserves its nodes' ports (lease_tcp_ports() in
apps/src/launch/launcher.hpp): from below the kernel's ephemeral range (32768 up), where no
connect() takes a source port, and under a lock on those bytes of /tmp/boreal-ports-UID.lock,
so no launch or other test running at the same time is handed them. A port is held until the
process exits, so a node killed and started again gets its port back. (A port the kernel
picks, bound and released, can be taken by any connection before the node binds it, and a
restarted node could find its port gone.)
"""
import fcntl
import os
import random
import socket

_LOCK_PATH = "/tmp/boreal-ports-%d.lock" % os.getuid()
_lock_fd = None   # one descriptor for the process: POSIX locks go when any of its fds closes
_held = set()     # this process's ports (its own POSIX locks never conflict with each other)


def _bindable(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port(span=1):
    """A port p with p .. p + span - 1 free now, reserved until this process exits."""
    global _lock_fd
    if _lock_fd is None:
        try:
            _lock_fd = os.open(_LOCK_PATH, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                               0o600)
        except OSError:
            _lock_fd = -1  # no lock file: the ports are only checked free
    rng = random.SystemRandom()
    for _ in range(200):
        first = rng.randrange(20000, 32000)
        ports = range(first, first + span)
        if any(p in _held for p in ports):
            continue
        if _lock_fd >= 0:
            try:
                fcntl.lockf(_lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB, span, first, os.SEEK_SET)
            except OSError:
                continue  # another process holds some of them
        if all(_bindable(p) for p in ports):
            _held.update(ports)
            return first
        if _lock_fd >= 0:
            fcntl.lockf(_lock_fd, fcntl.LOCK_UN, span, first, os.SEEK_SET)
    raise RuntimeError("no %d free consecutive port(s) in 20000-32000 on 127.0.0.1" % span)
