"""Tags followed over time: ``tag_followers``, how many active chats followed each tag,
one row a UTC day and tag.

The running service's leader records each day once (:func:`record_day`): one
``GROUP BY`` over ``chat_tags`` joined to the active chats, written only while the day has
no rows, so that replicas, a new leader and restarts leave the first record of the day as
it is. Days older than :data:`KEEP_DAYS` go in the same transaction.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ColumnElement, Date, cast, delete, func, literal, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.models import ChatState
from bot.store.schema import chat_tags, chats, tag_followers

KEEP_DAYS = 400  # a year and a month: a year ago stays comparable, the table small


async def record_day(conn: AsyncConnection, *, today: dt.date, keep: int = KEEP_DAYS) -> bool:
    """Record ``today``'s followers of each tag (chats ``active``, the tag any-of or
    required), unless the day has rows already; drop the days before the last ``keep``.

    Returns:
        Whether this call recorded the day.
    """
    await conn.execute(
        delete(tag_followers).where(tag_followers.c.day <= today - dt.timedelta(days=keep))
    )
    recorded = select(tag_followers.c.day).where(tag_followers.c.day == today).limit(1)
    if (await conn.execute(recorded)).first() is not None:
        return False
    count = func.count(chat_tags.c.chat_pk)
    day: ColumnElement[dt.date] = literal(today, Date)
    if conn.dialect.name == "postgresql":  # a parameter's type is not inferred in a SELECT
        day = cast(day, Date)
    followers = (
        select(day, chat_tags.c.tag, count)
        .join_from(chat_tags, chats, chats.c.id == chat_tags.c.chat_pk)
        .where(chat_tags.c.kind != "excluded", chats.c.state == ChatState.ACTIVE.value)
        .group_by(chat_tags.c.tag)
    )
    dialect_insert = postgresql_insert if conn.dialect.name == "postgresql" else sqlite_insert
    # Two replicas recording the same day at once: the second inserts nothing.
    await conn.execute(
        dialect_insert(tag_followers)
        .from_select(["day", "tag", "chats"], followers)
        .on_conflict_do_nothing(index_elements=[tag_followers.c.day, tag_followers.c.tag])
    )
    return True


async def followers_by_day(
    conn: AsyncConnection, *, since: dt.date
) -> dict[dt.date, dict[str, int]]:
    """The recorded days from ``since`` on, oldest first: each tag's chats that day (a tag
    no active chat followed is absent)."""
    rows = await conn.execute(
        select(tag_followers.c.day, tag_followers.c.tag, tag_followers.c.chats)
        .where(tag_followers.c.day >= since)
        .order_by(tag_followers.c.day, tag_followers.c.tag)
    )
    days: dict[dt.date, dict[str, int]] = {}
    for day, tag, n in rows:
        days.setdefault(day, {})[tag] = int(n)
    return days


__all__ = ["KEEP_DAYS", "followers_by_day", "record_day"]
