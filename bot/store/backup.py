"""Consistent copies of a SQLite database, also while ``trendbot run`` writes to it.

SQLite's online backup API copies the database as one snapshot: in WAL mode it reads
beside the writers and holds none of them up, and the copy is a database of its own (no
``-wal`` file to carry along). PostgreSQL has ``pg_dump`` for the same (see the README).
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from contextlib import closing
from pathlib import Path

from sqlalchemy.engine import make_url

from bot.errors import BotError

NOT_SQLITE = (
    "DATABASE_URL is not a SQLite file; for PostgreSQL use pg_dump "
    "(e.g. pg_dump --format=custom --file trendbot.dump DATABASE; see the README)"
)
# How long the copy waits for a writer's lock before it gives up, as the store does.
BUSY_TIMEOUT_SECONDS = 30.0


class BackupError(BotError):
    """The copy could not be made; the message says why, and nothing was left behind."""


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite ``url``, or None for another database or an in-memory one."""
    parsed = make_url(url)
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or database in ("", ":memory:"):
        return None
    if database.startswith("file:"):
        return None
    return Path(database)


def copy(source: Path, destination: Path) -> None:
    """Copy the database at ``source`` to the new file ``destination``, consistently.

    Raises:
        BackupError: no database at ``source``, ``destination`` exists, or the copy failed.
    """
    if not source.is_file():
        raise BackupError(f"no database at {source}")
    if destination.exists():
        raise BackupError(f"{destination} exists; name a new file")
    partial = destination.with_name(destination.name + ".partial")
    try:
        with (
            closing(sqlite3.connect(source, timeout=BUSY_TIMEOUT_SECONDS)) as src,
            closing(sqlite3.connect(partial)) as dst,
        ):
            src.backup(dst)  # all pages in one step: one snapshot
        os.replace(partial, destination)
    except (sqlite3.Error, OSError) as exc:
        partial.unlink(missing_ok=True)
        raise BackupError(f"the copy failed: {exc}") from exc


def keep_before_upgrade(source: Path, *, revision: str) -> Path:
    """A copy of ``source`` beside it, named after the revision it had and the time, made
    before ``db upgrade`` migrates it; returns its path."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    destination = source.with_name(f"{source.name}.before-{revision}-{stamp}")
    copy(source, destination)
    return destination
