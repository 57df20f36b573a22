"""The ``leases`` table: named rows with a holder and an expiry (see :mod:`bot.ops.leader`).

Each function is one transaction of its own.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.engine import reader
from bot.store.schema import leases


async def hold(
    engine: AsyncEngine,
    *,
    name: str,
    holder: str,
    now: dt.datetime,
    expires: dt.datetime,
    is_gone: Callable[[str], bool],
) -> bool:
    """Take or renew lease ``name`` for ``holder`` until ``expires``.

    The lease is taken when it is free, expired, already ``holder``'s, or held by a holder
    ``is_gone`` says no longer exists (a killed process of this host: no need to wait for
    its lease to expire).

    Returns:
        Whether ``holder`` has the lease afterwards.
    """
    async with engine.begin() as conn:
        result = await conn.execute(
            update(leases)
            .where(leases.c.name == name, (leases.c.holder == holder) | (leases.c.expires_at < now))
            .values(holder=holder, expires_at=expires)
        )
        if result.rowcount == 1:
            return True
        current = (await conn.execute(select(leases.c.holder).where(leases.c.name == name))).first()
        if current is not None:
            if not is_gone(current[0]):
                return False
            result = await conn.execute(
                update(leases)
                .where(leases.c.name == name, leases.c.holder == current[0])
                .values(holder=holder, expires_at=expires)
            )
            return result.rowcount == 1
    try:
        async with engine.begin() as conn:
            await conn.execute(insert(leases).values(name=name, holder=holder, expires_at=expires))
        return True
    except IntegrityError:  # another holder inserted it first
        return False


async def count_live(engine: AsyncEngine, *, prefix: str, now: dt.datetime) -> int:
    """How many leases named ``prefix…`` have not expired at ``now``."""
    async with reader(engine).connect() as conn:
        count = (
            await conn.execute(
                select(func.count()).where(
                    leases.c.name.like(prefix + "%"), leases.c.expires_at >= now
                )
            )
        ).scalar_one()
    return int(count)


async def live_holders(
    engine: AsyncEngine, *, prefix: str, now: dt.datetime, besides: str | None = None
) -> list[tuple[str, dt.datetime]]:
    """``(holder, expires_at)`` of the leases named ``prefix…`` alive at ``now``, leaving
    out those of holder ``besides``."""
    query = select(leases.c.holder, leases.c.expires_at).where(
        leases.c.name.like(prefix + "%"), leases.c.expires_at >= now
    )
    if besides is not None:
        query = query.where(leases.c.holder != besides)
    async with reader(engine).connect() as conn:
        return [(holder, expires) for holder, expires in await conn.execute(query)]


async def drop(engine: AsyncEngine, *, name: str) -> None:
    """Drop lease ``name``, whoever holds it."""
    async with engine.begin() as conn:
        await conn.execute(delete(leases).where(leases.c.name == name))


async def release(
    engine: AsyncEngine,
    *,
    holder: str,
    names: Sequence[str],
    prune_prefixes: Sequence[str],
    expired_before: dt.datetime,
) -> None:
    """Drop ``holder``'s leases ``names``, and in the same transaction the leases named
    ``prune_prefixes…`` that expired before ``expired_before`` (holders long gone)."""
    async with engine.begin() as conn:
        await conn.execute(
            delete(leases).where(leases.c.holder == holder, leases.c.name.in_(list(names)))
        )
        await conn.execute(
            delete(leases).where(
                or_(*(leases.c.name.like(prefix + "%") for prefix in prune_prefixes)),
                leases.c.expires_at < expired_before,
            )
        )


async def leave(engine: AsyncEngine, *, name: str, holder: str, expires: dt.datetime) -> None:
    """Put row ``name`` in place for ``holder`` until ``expires``, or move the expiry of the
    one there: a request left for whichever replica looks for it (``bot.ops.refresh``)."""
    async with engine.begin() as conn:
        insert_of = (postgresql if conn.dialect.name == "postgresql" else sqlite).insert
        statement = insert_of(leases).values(name=name, holder=holder, expires_at=expires)
        await conn.execute(
            statement.on_conflict_do_update(
                index_elements=[leases.c.name], set_={"expires_at": expires}
            )
        )


async def take(engine: AsyncEngine, *, name: str) -> bool:
    """Remove row ``name``; True when it was there (a request left by :func:`leave`)."""
    async with engine.begin() as conn:
        found = await conn.scalar(select(leases.c.expires_at).where(leases.c.name == name))
        if found is None:
            return False
        await conn.execute(delete(leases).where(leases.c.name == name))
    return True
