"""Where a command's messages stand: which are to be sent now, and how the ones a command
set out to send ended (``digest --now``, ``broadcast`` and their wait on a running service).
The outbox's states are :mod:`bot.store.outbox`'s."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, case, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.store.outbox import BULK_CHUNK, FAILED, HELD, QUEUED, SENDING, SENT
from bot.store.schema import outbox
from bot.util import chunks

__all__ = ["Standing", "due_count", "due_ids", "standing"]


@dataclass(frozen=True, slots=True)
class Standing:
    """Where a set of messages stands: sent, failed for good, held (sent twice with no
    answer: they may have arrived, and are not sent again), to be sent now (queued and due,
    or being sent), and queued for a later retry."""

    sent: int = 0
    failed: int = 0
    due: int = 0
    later: int = 0
    held: int = 0


def _to_send_now(now: dt.datetime) -> ColumnElement[bool]:
    return or_(
        outbox.c.status == SENDING, and_(outbox.c.status == QUEUED, outbox.c.not_before <= now)
    )


async def due_ids(
    conn: AsyncConnection, *, now: dt.datetime, chat_pks: Sequence[int] | None = None
) -> list[int]:
    """The messages to be sent now (queued and due, or being sent), of these chats or all."""
    query = select(outbox.c.id).where(_to_send_now(now))
    if chat_pks is not None:
        query = query.where(outbox.c.chat_pk.in_(list(chat_pks)))
    return [row_id for (row_id,) in await conn.execute(query.order_by(outbox.c.id))]


async def due_count(
    conn: AsyncConnection,
    *,
    now: dt.datetime,
    up_to_id: int | None = None,
    chat_pks: Sequence[int] | None = None,
    broadcast: int | None = None,
) -> int:
    """How many messages are to be sent now: of these chats (or all) up to row ``up_to_id``,
    or of ``broadcast``. One indexed count, for waiting on what another process sends."""
    query = select(func.count()).where(_to_send_now(now))
    if up_to_id is not None:
        query = query.where(outbox.c.id <= up_to_id)
    if chat_pks is not None:
        query = query.where(outbox.c.chat_pk.in_(list(chat_pks)))
    if broadcast is not None:
        query = query.where(outbox.c.broadcast_id == broadcast)
    return int((await conn.execute(query)).scalar_one())


async def standing(conn: AsyncConnection, *, row_ids: Sequence[int], now: dt.datetime) -> Standing:
    """Where the messages ``row_ids`` stand at ``now``."""
    counts: Counter[str] = Counter()
    due = func.sum(case((outbox.c.not_before <= now, 1), else_=0))
    for part in chunks(list(row_ids), BULK_CHUNK):
        rows = await conn.execute(
            select(outbox.c.status, func.count(), due)
            .where(outbox.c.id.in_(list(part)))
            .group_by(outbox.c.status)
        )
        for status, count, due_now in rows:
            if status == QUEUED:
                counts["due"] += int(due_now or 0)
                counts["later"] += int(count) - int(due_now or 0)
            elif status == SENDING:
                counts["due"] += int(count)
            else:
                counts[status] += int(count)
    return Standing(
        sent=counts[SENT],
        failed=counts[FAILED],
        due=counts["due"],
        later=counts["later"],
        held=counts[HELD],
    )
