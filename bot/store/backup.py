"""Consistent copies of a SQLite database, also while ``trendbot run`` writes to it.

SQLite's online backup API copies the database as one snapshot: in WAL mode it reads
beside the writers and holds none of them up, and the copy is a database of its own (no
``-wal`` file to carry along). PostgreSQL has ``pg_dump`` for the same (docs/operating.md,
"Backups").

:func:`migrate` is how every command opens its database: it takes the copy before a
SQLite database of an older revision is migrated, and says what it did.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.engine import make_url

from bot.errors import BotError
from bot.store.files import create_exclusive

log = logging.getLogger("bot.store")

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from bot.store.engine import Upgrade

# Where the operator reads how to back up PostgreSQL (pg_dump, pg_restore).
PG_BACKUP_DOCS = "docs/operating.md#backups"
NOT_SQLITE = (
    "DATABASE_URL is not a SQLite file; for PostgreSQL use pg_dump "
    f"(e.g. pg_dump --format=custom --file trendbot.dump DATABASE; see {PG_BACKUP_DOCS})"
)
# Told before a PostgreSQL database of an older revision is migrated: no copy is taken.
PG_NO_COPY = (
    "migrating the PostgreSQL database from {before} to {after} without a copy: back up "
    f"with pg_dump before trendbot db upgrade (see {PG_BACKUP_DOCS})"
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

    The copy is written to ``destination.partial``, created here (exclusively, 0600 whatever
    the umask: it holds every chat), and renamed to ``destination`` once complete; a
    ``.partial`` file that is there already (another copy under way, one left by a crash,
    or anyone else's) is refused, never written into.

    Raises:
        BackupError: no database at ``source``, ``destination`` or its ``.partial`` file
            exists, or the copy failed.
    """
    if not source.is_file():
        raise BackupError(f"no database at {source}")
    if destination.exists() or destination.is_symlink():
        raise BackupError(f"{destination} exists; name a new file")
    partial = destination.with_name(destination.name + ".partial")
    try:
        os.close(create_exclusive(partial))
    except FileExistsError:
        raise BackupError(
            f"{partial} exists (a copy under way, or one left unfinished); "
            "remove it if no copy is running"
        ) from None
    except OSError as exc:
        raise BackupError(f"cannot create {partial}: {exc.strerror or exc}") from None
    try:
        with (
            closing(sqlite3.connect(source, timeout=BUSY_TIMEOUT_SECONDS)) as src,
            closing(sqlite3.connect(partial)) as dst,
        ):
            src.backup(dst)  # all pages in one step: one snapshot
        _rename_new(partial, destination)
    except (sqlite3.Error, OSError) as exc:
        partial.unlink(missing_ok=True)
        if isinstance(exc, FileExistsError):
            raise BackupError(f"{destination} exists; name a new file") from None
        raise BackupError(f"the copy failed: {exc}") from exc


def _rename_new(partial: Path, destination: Path) -> None:
    """``partial`` becomes ``destination``, which must not exist (a file made there since
    the check is not replaced): a hard link, then the partial name goes."""
    try:
        os.link(partial, destination, follow_symlinks=False)
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: the check above stands
        os.replace(partial, destination)
        return
    partial.unlink()


def keep_before_upgrade(source: Path, *, revision: str) -> Path:
    """A copy of ``source`` beside it, named after the revision it had and the time, made
    before ``db upgrade`` migrates it; returns its path."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    base = f"{source.name}.before-{revision}-{stamp}"
    # Two commands started in the same second (a refused upgrade, then the next command)
    # each keep their own copy: the second is numbered, never refused for the first's name.
    for n in range(1, 100):
        destination = source.with_name(base if n == 1 else f"{base}-{n}")
        if destination.exists() or destination.is_symlink():
            continue
        try:
            copy(source, destination)
        except BackupError:
            if destination.exists() or destination.is_symlink():
                continue  # made between the check and the copy: take the next name
            raise
        return destination
    raise BackupError(f"{source.with_name(base)} and 98 numbered copies exist; remove old ones")


async def migrate(engine: AsyncEngine, url: str, *, tell: Callable[[str], None]) -> Upgrade:
    """Bring the database at ``url`` (``engine``'s, not yet connected) to this build's
    schema, as every command does before anything else, and ``tell`` what that did: a
    SQLite database of an older revision is first copied beside itself, as ``db upgrade``
    does (the copy named); on PostgreSQL, where no copy is taken, the operator is told to
    back up with pg_dump; a SQLite file that did not exist is named once created.

    Raises:
        SchemaError: as :func:`bot.store.engine.upgrade` (a newer build's database is
            neither copied nor changed).
    """
    from bot.store.engine import head_revision, schema_verdict, stamped_revision, upgrade

    source = sqlite_file(url)
    # A file made for it a moment ago is empty (bot/store/files.py creates it 0600 before
    # SQLite opens it): that, or no file at all, is a new database.
    new = source is not None and (not source.exists() or source.stat().st_size == 0)
    stamped = await stamped_revision(engine)
    head = head_revision()
    if stamped is not None and stamped != head and schema_verdict(stamped) is None:
        if source is not None:
            kept = await asyncio.to_thread(keep_before_upgrade, source, revision=stamped)
            tell(f"backup of the database before the upgrade: {kept}")
        else:
            tell(PG_NO_COPY.format(before=stamped, after=head))
    done = await upgrade(engine)
    if new and source is not None:
        tell(f"created a new database: {source.resolve()}")
    return done


@asynccontextmanager
async def open_store(url: str) -> AsyncIterator[AsyncEngine]:
    """The database at ``url``, migrated to the latest schema, for commands that only need
    it; what that did is logged (:func:`migrate`)."""
    from bot.store.engine import create_engine

    engine = create_engine(url)
    try:
        await migrate(engine, url, tell=to_log)
        yield engine
    finally:
        await engine.dispose()


def to_log(line: str) -> None:
    """What opening the database did, as a WARNING: the one line on stderr (text or JSON, as
    LOG_FORMAT says) that is shown at any LOG_LEVEL and beside the console; a command's
    stdout is its output."""
    log.warning("%s", line)
