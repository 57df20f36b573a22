"""Telegram forum topics: a forum's topics are chats of their own, ``-100123/45`` of the
forum ``-100123``, and what happens to the forum happens to each of them."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.models import Platform
from bot.store.chats import REMOVED, REMOVED_REASON, ChatRecord, deactivate, record_from_row
from bot.store.schema import chats


def topic_prefix(chat_id: str) -> str:
    """The start of the ids of a Telegram forum's topics: ``-100123/`` for ``-100123``."""
    return f"{chat_id}/"


async def with_topics(
    conn: AsyncConnection, *, platform: Platform, chat_id: str
) -> list[ChatRecord]:
    """The chat ``chat_id`` and each of its forum topics (``-100123/45``) that the store has."""
    prefix = topic_prefix(chat_id)
    rows = await conn.execute(
        select(chats).where(
            chats.c.platform == platform.value,
            (chats.c.chat_id == chat_id) | (func.substr(chats.c.chat_id, 1, len(prefix)) == prefix),
        )
    )
    return [record_from_row(r) for r in rows.mappings()]


async def remove_bot(engine: AsyncEngine, *, platform: Platform, chat_id: str) -> int:
    """The bot was removed from chat ``chat_id``: it and each of its forum topics become
    inactive, in one transaction. Returns how many chats that was (0: never seen)."""
    async with engine.begin() as conn:
        records = await with_topics(conn, platform=platform, chat_id=chat_id)
        for record in records:  # the group and each of its forum topics
            await deactivate(conn, pk=record.pk, reason=REMOVED_REASON, code=REMOVED)
    return len(records)
