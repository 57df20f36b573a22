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


async def _admin(base_url: str, statement: str) -> None:
    async with _admin_engine(base_url) as admin, admin.connect() as conn:
        await conn.execute(text(statement))
