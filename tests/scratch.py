"""Scratch databases for the tests and benchmarks: made empty, dropped afterwards.

On PostgreSQL a database of a random name is created on the server of a base URL (which
must allow ``CREATE DATABASE``) and dropped, connections and all, at the end; without a
base URL the scratch database is a SQLite file in a temporary directory.
"""

from __future__ import annotations

import contextlib
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine


async def create_database(base_url: str, *, prefix: str = "trendbot") -> str:
    """A new empty PostgreSQL database on the server of ``base_url``; returns its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    await _admin(base_url, f'CREATE DATABASE "{name}"')
    return make_url(base_url).set(database=name).render_as_string(hide_password=False)


async def drop_database(url: str, *, base_url: str) -> None:
    """Drop the PostgreSQL database of ``url`` (made by :func:`create_database` on the
    server of ``base_url``), even with connections still open to it."""
    name = make_url(url).database
    await _admin(base_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def recycle_database(url: str, *, base_url: str) -> str:
    """Empty the PostgreSQL database of ``url`` for its next use, far faster than dropping
    it and creating another (PostgreSQL writes a new database out in full); returns its new
    URL.

    Its connections are closed and it is renamed first, so that whatever still holds the
    old URL (a process a test left behind) can never write into the next user's database.
    Everything in its ``public`` schema goes: tables, sequences, functions and triggers.
    """
    old = make_url(url)
    name = f"{str(old.database).rsplit('_', 1)[0]}_{uuid.uuid4().hex[:12]}"
    # Both names are this module's own (letters, digits and underscores).
    close_connections = (  # waiting up to 5 s for each to end
        "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
        f"WHERE datname = '{old.database}' AND pid <> pg_backend_pid()"
    )
    rename = f'ALTER DATABASE "{old.database}" RENAME TO "{name}"'
    for attempt in range(3):  # a process left behind may connect again in between
        try:
            await _admin(base_url, close_connections, rename)
            break
        except DBAPIError:
            if attempt == 2:
                raise
    new_url = old.set(database=name).render_as_string(hide_password=False)
    try:
        await _admin(new_url, "DROP SCHEMA public CASCADE", "CREATE SCHEMA public")
    except Exception:
        await drop_database(new_url, base_url=base_url)
        raise
    return new_url


class DatabasePool:
    """Scratch PostgreSQL databases on the server of ``base_url``, each emptied by
    :func:`recycle_database` when given back and handed out again: a test suite that needs
    a fresh database for each of a thousand tests creates a few."""

    def __init__(self, base_url: str, *, prefix: str = "trendbot") -> None:
        self.base_url = base_url
        self._prefix = prefix
        self._free: list[str] = []
        self._all: set[str] = set()

    async def take(self) -> str:
        if self._free:
            return self._free.pop()
        url = await create_database(self.base_url, prefix=self._prefix)
        self._all.add(url)
        return url

    async def give_back(self, url: str) -> None:
        # If this fails, ``url`` stays listed, so close() still drops it.
        fresh = await recycle_database(url, base_url=self.base_url)
        self._all.discard(url)
        self._all.add(fresh)
        self._free.append(fresh)

    async def close(self) -> None:
        for url in sorted(self._all):
            await drop_database(url, base_url=self.base_url)
        self._all.clear()
        self._free.clear()


async def server_version(base_url: str) -> str:
    async with _admin_engine(base_url) as admin, admin.connect() as conn:
        return str((await conn.execute(text("SHOW server_version"))).scalar_one())


@contextlib.asynccontextmanager
async def scratch_database(
    base_url: str | None, *, directory: Path | None = None, prefix: str = "trendbot"
) -> AsyncIterator[str]:
    """The URL of a scratch database: on the PostgreSQL server of ``base_url``, or a SQLite
    file (in ``directory``, else a temporary one) when ``base_url`` is None."""
    if base_url is None:
        if directory is not None:
            yield f"sqlite+aiosqlite:///{directory}/{prefix}.db"
            return
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite+aiosqlite:///{tmp}/{prefix}.db"
        return
    url = await create_database(base_url, prefix=prefix)
    try:
        yield url
    finally:
        await drop_database(url, base_url=base_url)


@contextlib.asynccontextmanager
async def _admin_engine(base_url: str) -> AsyncIterator[AsyncEngine]:
    admin = create_async_engine(base_url, isolation_level="AUTOCOMMIT")
    try:
        yield admin
    finally:
        await admin.dispose()


async def _admin(base_url: str, *statements: str) -> None:
    async with _admin_engine(base_url) as admin, admin.connect() as conn:
        for statement in statements:
            await conn.execute(text(statement))
