"""One ``trendbot run`` per SQLite database: the lock file held while the service runs.

An ``flock`` on ``DATABASE.run.lock``: the kernel releases it when the process dies, however
it dies, and the holder's pid is written in the file for the operator. The ``filelock``
package was weighed (4.3): its ``UnixFileLock`` is the same ``flock`` and would save about
ten lines, but it records no pid, falls back on its own where ``flock`` is missing to a
marker file judged stale by pid and host rather than released by the kernel, and is a
dependency of some 15,000 lines that adds about 70 ms to the start; this stays.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from sqlalchemy.engine import make_url

from bot.errors import BotError
from bot.store import files


class AlreadyRunning(BotError):
    """Another ``trendbot run`` holds this SQLite database."""


class CannotLock(BotError):
    """The lock file cannot be opened or locked (no permission, a file system without
    ``flock``): the run does not start unguarded."""


@contextlib.contextmanager
def sqlite_run_lock(database_url: str) -> Iterator[None]:
    """One ``run`` per SQLite file: a lock file beside it, held while the service runs.

    The one-shot commands do not take it, so they keep working beside a running service.
    """
    url = make_url(database_url)
    database = url.database or ""
    if url.get_backend_name() != "sqlite" or database in ("", ":memory:"):
        yield
        return
    path = Path(database).resolve()
    lock = f"{path}.run.lock"
    try:
        files.private_dirs(path.parent)  # as the store makes it
        files.private_append(Path(lock))  # the owner's alone, as the database beside it
        handle: IO[str] = open(lock, "a+")  # noqa: SIM115 - held for the whole run
    except OSError as exc:
        raise CannotLock(f"cannot open {lock}: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AlreadyRunning(
                f"another trendbot run is already using {path}; SQLite serves one run "
                "process (use PostgreSQL for several replicas)"
            ) from None
        except OSError as exc:
            raise CannotLock(
                f"cannot lock {lock}: {exc.strerror or exc} (a file system without flock "
                "cannot guard against a second run: use a local disk, or PostgreSQL)"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield
    finally:
        handle.close()
