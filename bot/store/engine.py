"""Engine creation and schema migrations for SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import sqlite3
import time
from collections import deque
from collections.abc import Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import aiosqlite
from sqlalchemy import ARRAY, ColumnElement, any_, bindparam, event, text
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

from bot.errors import SchemaError
from bot.store.files import prepare_database_file
from bot.store.migrations import MIGRATIONS
from bot.util import chunks

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger(__name__)

# Waits for another process's write (a one-shot command beside `run`) instead of failing.
SQLITE_BUSY_TIMEOUT_MS = 30_000
# Any fixed number: serialises concurrent `db upgrade` runs of several replicas.
PG_MIGRATION_LOCK = 7_246_016_001
# SQLite connections kept open: each is a thread of aiosqlite's plus its page cache, and
# one opened past them is closed on return, costing a thread and the PRAGMAs for each use.
# Enough for the commands handled at once (the Telegram channel runs 32) beside delivery.
SQLITE_POOL_SIZE = 16
SQLITE_MAX_OVERFLOW = 32
# A pooled connection unused this long is pinged before use (a server restart, or a firewall
# dropping idle connections); a busy one is not, and a ping costs three round trips.
IDLE_PING_SECONDS = 30.0
# Set by a migration in its Alembic config's attributes when the file should be compacted.
COMPACT_AFTER_UPGRADE = "trendbot_compact"
# The execution option that marks an engine's transactions as read-only (see ``reader``).
READ_ONLY = "trendbot_read_only"
_RETURNED_AT = "trendbot_returned_at"


def create_engine(
    url: str, *, idle_ping_seconds: float = IDLE_PING_SECONDS, **kwargs: Any
) -> AsyncEngine:
    """An async engine for ``url``; SQLite gets WAL, foreign keys and immediate transactions.

    Every SQLite transaction starts with ``BEGIN IMMEDIATE`` so two processes never both
    read and then fail to upgrade to a write lock; they queue on ``busy_timeout`` instead.
    Transactions that only read may say so (:func:`reader`) and start with a deferred
    ``BEGIN``, which in WAL mode neither waits for a writer nor holds one up.

    A PostgreSQL connection is checked before use only when it has been idle for
    ``idle_ping_seconds``; one that dropped while in use fails its transaction, and the
    pool then replaces every connection opened before the failure.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        file_db = bool(database) and database != ":memory:" and not database.startswith("file:")
        if file_db:
            prepare_database_file(Path(database))  # 0600 in a 0700 directory
            kwargs.setdefault("pool_size", SQLITE_POOL_SIZE)
            kwargs.setdefault("max_overflow", SQLITE_MAX_OVERFLOW)
        engine = create_async_engine(
            url,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            **({"module": _SQLiteDbapi(aiosqlite, sqlite3)} if fast_sqlite_supported() else {}),
            **kwargs,
        )
        _configure_sqlite(engine)
        return engine
    kwargs.setdefault("pool_size", 10)
    kwargs.setdefault("max_overflow", 10)
    engine = create_async_engine(url, **kwargs)
    _ping_when_idle(engine, idle_seconds=idle_ping_seconds)
    return engine


def reader(engine: AsyncEngine) -> AsyncEngine:
    """``engine`` for transactions that only read, on the same pool of connections.

    On SQLite its transactions start with a deferred ``BEGIN``: in WAL mode they read a
    snapshot beside a writer and beside each other, where ``BEGIN IMMEDIATE`` would queue
    every read behind the one write lock. Do not write in them: the upgrade to a write lock
    fails with ``database is locked`` when another connection wrote since the snapshot.
    PostgreSQL's transactions are the same either way.
    """
    return engine.execution_options(**{READ_ONLY: True})


def _ping_when_idle(engine: AsyncEngine, *, idle_seconds: float) -> None:
    """Ping a pooled connection on checkout when it has lain idle for a while.

    ``pool_pre_ping`` pings on every checkout: three round trips on asyncpg (``BEGIN``, a
    query, ``ROLLBACK``), more than a command's own work. A connection in steady use is
    proven by that use; a failure then invalidates the pool (SQLAlchemy's disconnect
    handling), so only the transaction that met the dead connection fails.
    """

    @event.listens_for(engine.sync_engine, "checkin")
    def _on_checkin(_dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        record.info[_RETURNED_AT] = time.monotonic()

    @event.listens_for(engine.sync_engine, "checkout")
    def _on_checkout(
        dbapi_connection: Any, record: ConnectionPoolEntry, _proxy: PoolProxiedConnection
    ) -> None:
        returned = record.info.get(_RETURNED_AT)
        if returned is None or time.monotonic() - returned < idle_seconds:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:
            # The pool discards the connection and checks out another (up to three tries).
            raise DisconnectionError(f"an idle connection failed its ping: {exc}") from exc


def fast_sqlite_supported() -> bool:
    """Whether the installed SQLAlchemy and aiosqlite have the internals the adapter below
    builds on (both pinned to tested ranges); without them the stock adapter is used, which
    works the same, only with more trips to aiosqlite's thread."""
    return (
        hasattr(aiosqlite.Connection, "_execute")
        and hasattr(AsyncAdapt_aiosqlite_connection, "_handle_exception")
        and {"await_", "_adapt_connection", "_rows"} <= set(AsyncAdapt_aiosqlite_cursor.__slots__)
    )


class _SQLiteCursor(AsyncAdapt_aiosqlite_cursor):
    """SQLAlchemy's aiosqlite cursor, running a statement in one trip to aiosqlite's thread.

    SQLAlchemy's takes four (cursor, execute, fetch, close), and each trip costs a thread
    switch and a wake-up of the event loop: more CPU than SQLite spends on a command's
    queries. The trip also opens the transaction the statement belongs to (see
    :meth:`_SQLiteConnection.begin_with_next_statement`).
    """

    __slots__ = ()

    def execute(self, operation: Any, parameters: Any = None) -> None:
        self._run(operation, () if parameters is None else parameters, many=False)

    def executemany(self, operation: Any, seq_of_parameters: Any) -> None:
        self._run(operation, seq_of_parameters, many=True)

    def _run(self, operation: Any, parameters: Any, *, many: bool) -> None:
        connection = cast(_SQLiteConnection, self._adapt_connection)
        driver = connection.driver_connection
        begin = connection.take_begin()

        def run() -> tuple[Any, list[Any] | None, int, int]:  # in aiosqlite's thread
            sqlite = driver._conn  # aiosqlite's sqlite3 connection, as SQLAlchemy uses it
            if begin is not None:
                sqlite.execute(begin)
            cursor = (sqlite.executemany if many else sqlite.execute)(operation, parameters)
            try:
                rows = cursor.fetchall() if cursor.description else None
                return cursor.description, rows, cursor.lastrowid, cursor.rowcount
            finally:
                cursor.close()

        try:
            description, rows, lastrowid, rowcount = self.await_(driver._execute(run))
        except Exception as error:
            connection._handle_exception(error)
        if description:
            self.description = description
            self.lastrowid = self.rowcount = -1
            self._rows = deque(rows or ())
        else:
            self.description = None
            self.lastrowid = lastrowid
            self.rowcount = rowcount


class _SQLiteConnection(AsyncAdapt_aiosqlite_connection):
    """SQLAlchemy's aiosqlite connection with :class:`_SQLiteCursor`, a ``BEGIN`` sent with
    the transaction's first statement, and no trip to aiosqlite's thread for a commit or
    rollback with no transaction open (the pool rolls back every connection it takes back,
    after a commit too)."""

    __slots__ = ("_begin",)

    def __init__(self, dbapi: Any, connection: Any) -> None:
        super().__init__(dbapi, connection)
        self._begin: str | None = None

    def begin_with_next_statement(self, begin: str) -> None:
        """Open the transaction with ``begin`` in the same trip as the next statement.

        SQLite's deferred ``BEGIN`` reads nothing until that statement anyway, and
        ``BEGIN IMMEDIATE`` waits for the write lock there instead of a trip earlier.
        """
        self._begin = begin

    def take_begin(self) -> str | None:
        begin, self._begin = self._begin, None
        return begin

    def cursor(self, server_side: bool = False) -> AsyncAdapt_aiosqlite_cursor:
        return super().cursor(server_side) if server_side else _SQLiteCursor(self)

    def commit(self) -> None:
        self._begin = None
        if self.driver_connection.in_transaction:
            super().commit()

    def rollback(self) -> None:
        self._begin = None
        if self.driver_connection.in_transaction:
            super().rollback()


class _SQLiteDbapi(AsyncAdapt_aiosqlite_dbapi):
    def connect(self, *arg: Any, **kw: Any) -> AsyncAdapt_aiosqlite_connection:
        return _SQLiteConnection(self, super().connect(*arg, **kw).driver_connection)


def _configure_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Connection) -> None:
        dbapi_connection: Any = connection.connection.dbapi_connection
        read_only = connection.get_execution_options().get(READ_ONLY, False)
        begin = "BEGIN" if read_only else "BEGIN IMMEDIATE"
        if isinstance(dbapi_connection, _SQLiteConnection):
            dbapi_connection.begin_with_next_statement(begin)
        else:  # the stock adapter: sqlite3's execute shortcut, one trip to the thread
            dbapi_connection.execute(begin)


def _alembic_config(connection: Connection) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


_REVISION_RE = re.compile(r"^(down_revision|revision)\s*=\s*(None|\"([^\"]*)\")", re.MULTILINE)
# The stamp of databases made before the first release. Such a database (or one with the
# bot's tables and no stamp) is refused: ``scripts/adopt_prerelease.py`` brings it to the
# baseline once, outside the bot, and then it upgrades as any other.
PRERELEASE_REVISION = "0001"
PRERELEASE_REFUSAL = (
    "the database was made before the first release (revision 0001, or the bot's tables "
    "with no revision): bring it to the baseline once with "
    "python scripts/adopt_prerelease.py DATABASE_URL (from a checkout of the project; "
    "see docs/operating.md, 'Upgrading'), then run trendbot db upgrade"
)


@dataclass(frozen=True, slots=True)
class Revisions:
    """The migrations this build has: their ids, and the newest."""

    head: str
    known: frozenset[str]


@functools.cache
def revisions() -> Revisions:
    """This build's migrations, read from the revision files without importing Alembic.

    Every command checks the schema first; when it is current (the usual case) this saves
    loading Alembic and its migration environment. Exactly one revision may be a head.
    """
    revised: set[str] = set()
    known: set[str] = set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        fields = {m[1]: m[3] for m in _REVISION_RE.finditer(path.read_text(encoding="utf-8"))}
        if fields.get("revision"):
            known.add(fields["revision"])
        if fields.get("down_revision"):
            revised.add(fields["down_revision"])
    heads = known - revised
    if len(heads) != 1:
        raise RuntimeError(f"the migrations must have exactly one head, not {sorted(heads)}")
    return Revisions(head=heads.pop(), known=frozenset(known))


def head_revision() -> str:
    """The newest migration's id (see :func:`revisions`)."""
    return revisions().head


@dataclass(frozen=True, slots=True)
class Upgrade:
    """What :func:`upgrade` did: the revision before (None: an empty database) and after."""

    before: str | None
    after: str
    # A migration rewrote stored text (revision 0005: credentials): on SQLite the file is
    # then rebuilt, so that no freed page keeps a copy of what was there.
    compact: bool = False

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def line(self) -> str:
        """``from REV to REV`` or ``already at REV``, as ``trendbot db upgrade`` prints it."""
        if not self.changed:
            return f"already at {self.after}"
        return f"from {self.before or 'an empty database'} to {self.after}"


def schema_verdict(stamped: str | None) -> str | None:
    """Why this build cannot run on a database stamped ``stamped``, or None when it can
    (after :func:`upgrade` where it is behind)."""
    if stamped == PRERELEASE_REVISION:
        return PRERELEASE_REFUSAL
    if stamped is None or stamped in revisions().known:
        return None
    return (
        f"the database's schema is at revision {stamped}, which this build does not know: "
        f"it was upgraded by a newer build; run that build (or restore the backup taken "
        f"before the upgrade)"
    )


def schema_mismatch(stamped: str | None) -> str | None:
    """Why the running service's schema does not match the code (``/healthz``), or None."""
    head = head_revision()
    if stamped == head:
        return None
    return f"schema at {stamped or 'no revision'}, this build needs {head}"


def _read_stamp(sync: Connection) -> str | None:
    if not sync.dialect.has_table(sync, "alembic_version"):
        return None
    row = sync.execute(text("SELECT version_num FROM alembic_version")).first()
    return None if row is None else str(row[0])


async def stamped_revision(engine: AsyncEngine) -> str | None:
    """The revision the database is at, or None for a database Alembic never ran on."""
    async with reader(engine).connect() as conn:
        return await conn.run_sync(_read_stamp)


async def upgrade(engine: AsyncEngine) -> Upgrade:
    """Apply every pending migration; safe to run from several processes at once.

    Raises:
        SchemaError: the database is at a revision this build does not know (a newer
            build's), or was made before the first release (:data:`PRERELEASE_REFUSAL`);
            nothing is changed.
    """
    stamped = await stamped_revision(engine)
    if (current := _current(stamped)) is not None:
        return current
    async with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            await conn.execute(text(f"SELECT pg_advisory_xact_lock({PG_MIGRATION_LOCK})"))
        done = await conn.run_sync(_upgrade_locked)
    database = engine.url.database or ""
    if done.compact and engine.dialect.name == "sqlite" and database not in ("", ":memory:"):
        await asyncio.to_thread(_compact, database)
    return done


def _compact(database: str) -> None:
    """``VACUUM`` the SQLite file: every page is written anew, none freed is left."""
    try:
        with closing(sqlite3.connect(database, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000)) as conn:
            conn.isolation_level = None
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.Error as exc:
        log.warning(
            "database upgraded, but not compacted (%s): freed pages may keep the old rows "
            "until VACUUM is run",
            exc,
        )


def _current(stamped: str | None) -> Upgrade | None:
    """The upgrade that changes nothing when ``stamped`` is the head revision; None when
    migrations are to run.

    Raises:
        SchemaError: ``stamped`` is a revision this build does not know.
    """
    head = head_revision()
    if stamped == head:
        return Upgrade(before=stamped, after=head)
    verdict = schema_verdict(stamped)
    if verdict is not None:
        raise SchemaError(verdict)
    return None


def _upgrade_locked(sync: Connection) -> Upgrade:
    """:func:`upgrade` once no other process migrates: the stamp is read again, as another
    replica may have migrated while this one waited."""
    from alembic import command

    stamped = _read_stamp(sync)
    if (current := _current(stamped)) is not None:
        return current
    if stamped is None and sync.dialect.has_table(sync, "chats"):
        raise SchemaError(PRERELEASE_REFUSAL)
    config = _alembic_config(sync)
    command.upgrade(config, "head")
    compact = bool(config.attributes.get(COMPACT_AFTER_UPGRADE))
    return Upgrade(before=stamped, after=head_revision(), compact=compact)


def id_parts(conn: AsyncConnection, ids: Sequence[int]) -> Iterable[Sequence[int]]:
    """``ids`` in as few lists as one statement of the store takes with :func:`among`: all
    at once on PostgreSQL (one array parameter), 500 at a time on SQLite (its limit on bound
    parameters)."""
    if conn.dialect.name == "postgresql":
        return [ids] if ids else []
    return chunks(ids)


def among(conn: AsyncConnection, column: Any, ids: Sequence[int]) -> ColumnElement[bool]:
    """``column IN ids``. On PostgreSQL ``column = ANY(array)``, one parameter: an ``IN``
    list is written into the statement's text, a parameter an id, each time it runs, which
    was a fifth of the planner's CPU at 100,000 chats (``bench/fanout.py --part planning``).
    """
    if conn.dialect.name == "postgresql":
        return cast(
            ColumnElement[bool],
            column == any_(bindparam(None, list(ids), type_=ARRAY(column.type))),
        )
    return cast(ColumnElement[bool], column.in_(ids))


def among_bound(column: Any, name: str, *, postgres: bool) -> ColumnElement[bool]:
    """:func:`among` with the ids left to the parameter ``name``, for a statement built once
    and run many times: ``column = ANY(:name)`` on PostgreSQL, an expanding ``IN`` elsewhere.
    Building ``column IN (500 values)`` anew for each run cost more CPU than running it
    (``bench/fanout.py --part delivery``)."""
    if postgres:
        return cast(ColumnElement[bool], column == any_(bindparam(name, type_=ARRAY(column.type))))
    return cast(ColumnElement[bool], column.in_(bindparam(name, expanding=True)))
