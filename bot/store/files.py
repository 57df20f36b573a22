"""The files of a SQLite store are the owner's alone, whatever the umask.

The database holds every chat and the Slack workspaces' (encrypted) tokens; a backup is the
same. A directory the bot creates for it is 0700; the database file is created 0600 before
SQLite opens it, and SQLite gives its ``-wal``, ``-shm`` and ``-journal`` files the mode of
the database file (``unixOpen`` in ``os_unix.c``: "the same permissions as the database"),
so they are 0600 too. A file of an earlier build that others could read is tightened.
The same holds for every file and directory the bot makes beside them: the console's log,
the git sources' clones, the lock file (:func:`private_dirs`, :func:`private_append`).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

PRIVATE_FILE = 0o600  # rw for the owner: the database, its -wal/-shm, a backup
PRIVATE_DIR = 0o700  # a directory the bot creates for them
SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's files beside a database


def private_dirs(path: Path) -> None:
    """The directory ``path``, each one of it created here 0700, parents too
    (``mkdir(parents=True)`` gives the parents the umask's mode, 0755 under 022)."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process
            directory.mkdir(mode=PRIVATE_DIR)


def private_append(path: Path) -> None:
    """The file ``path`` there to append to, 0600: created so whatever the umask, an
    existing one losing any access by others; never through a link (refused: OSError)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(path, flags, PRIVATE_FILE)
    try:
        os.fchmod(descriptor, PRIVATE_FILE)
    finally:
        os.close(descriptor)


def prepare_database_file(path: Path) -> None:
    """Before SQLite opens ``path``: its directory (0700 when created here) and the file
    itself (created empty and 0600 when missing: an empty file is an empty database); an
    existing database and its side files lose any access by others."""
    private_dirs(path.parent)
    try:
        descriptor = create_exclusive(path)
    except FileExistsError:
        for existing in (path, *(path.with_name(path.name + s) for s in SIDE_FILES)):
            tighten(existing)
    else:
        os.close(descriptor)


def create_exclusive(path: Path) -> int:
    """A new file at ``path``, opened for writing, 0600 whatever the umask; never one that
    is there already (a file, or a link to one).

    Raises:
        FileExistsError: something is at ``path``.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(path, flags, PRIVATE_FILE)
    try:
        os.fchmod(descriptor, PRIVATE_FILE)  # the umask may have taken bits off, never added
    except OSError:
        os.close(descriptor)
        raise
    return descriptor


def tighten(path: Path) -> None:
    """``path`` without group and other access, when it is a file of ours that has any."""
    with contextlib.suppress(OSError):  # missing, or not ours to change: left as it is
        mode = path.lstat().st_mode
        if path.is_file() and not path.is_symlink() and mode & 0o077:
            os.chmod(path, mode & 0o700)
