"""A full disk for one process, from outside it: its writes to files fail, as on a disk
with no room left, and work again once there is room, while everything else it does goes on.

Linux's per-process file size limit (``RLIMIT_FSIZE``, setrlimit(2), set on a running
process with prlimit(2)) lowered to one byte makes every write to a regular file past that
byte fail with EFBIG (SQLite: "disk I/O error", SQLITE_IOERR_WRITE, which the bot takes
for an outage like SQLITE_FULL) and raise SIGXFSZ, which CPython ignores. Reads, pipes and
sockets are untouched: the process's HTTP server still answers, and its logs must go to a
pipe (``tests.cli.start_cli(..., pipe=True)``), not to a file, to be kept meanwhile. No
mount and no privilege is needed: a process may lower its own child's limit.
"""

from __future__ import annotations

import resource
import sys

import pytest


def supported() -> None:
    """Skip the calling test where the limit cannot be set on another process."""
    if sys.platform != "linux" or not hasattr(resource, "prlimit"):
        pytest.skip("a full disk is simulated with Linux's prlimit(2)")


def fill(pid: int) -> None:
    """The disk of process ``pid`` is full from now on."""
    _, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (1, hard))


def free(pid: int) -> None:
    """The disk of process ``pid`` has room again."""
    _, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (hard, hard))
