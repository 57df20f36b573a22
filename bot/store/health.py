"""What ``/healthz`` and ``/metrics`` read: the database's reachability, the queue, the
sources. Each function is one read-only transaction."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store import outbox
from bot.store import pages as page_store
from bot.store.engine import reader, stamped_revision


@dataclass(frozen=True, slots=True)
class Queue:
    depth: int  # messages waiting to be sent
    oldest_age_seconds: float  # how long the oldest due one has waited; 0 when none


@dataclass(frozen=True, slots=True)
class Health:
    queue: Queue
    sources: list[page_store.SourceRow]  # those in WIKI_SOURCES (``bot.store.current``)
    revision: str | None  # the schema's, as stamped


async def queue(engine: AsyncEngine, *, now: dt.datetime) -> Queue:
    """The outbox's depth and the age of its oldest due message at ``now``."""
    async with reader(engine).connect() as conn:
        depth, _ = await outbox.pending(conn)
        oldest = await outbox.oldest_queued_age(conn, now=now)
    return Queue(depth=depth, oldest_age_seconds=oldest)


async def check(engine: AsyncEngine, *, now: dt.datetime) -> Health:
    """A round trip to the database, then the queue and the sources.

    Raises:
        Exception: whatever the driver raises when the database is unreachable.
    """
    async with reader(engine).connect() as conn:
        await conn.execute(text("SELECT 1"))
        depth, _ = await outbox.pending(conn)
        sources = await page_store.all_sources(conn, configured=True)
        oldest = await outbox.oldest_queued_age(conn, now=now)
    revision = await stamped_revision(engine)
    return Health(
        queue=Queue(depth=depth, oldest_age_seconds=oldest), sources=sources, revision=revision
    )
