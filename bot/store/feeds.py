"""Chats' private feeds: hashed tokens, and the pages a feed shows."""

from __future__ import annotations

import datetime as dt
import hmac
from dataclasses import dataclass

from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.models import DigestItem, Filter
from bot.rules import feeds, filters
from bot.store import chats as chat_store
from bot.store import current
from bot.store.chats import ChatRecord
from bot.store.engine import reader
from bot.store.pages import load_pages
from bot.store.schema import chat_feeds, chats, pages
from bot.util import utcnow

# Pages are read newest first, this many per entry wanted, then twice as many each round.
SCAN_FACTOR = 4


@dataclass(frozen=True, slots=True)
class FeedOwner:
    record: ChatRecord
    token_hash: str
    created_at: dt.datetime
    chat_updated_at: dt.datetime


async def has_feed(conn: AsyncConnection, chat_pk: int) -> bool:
    row = await conn.execute(select(chat_feeds.c.chat_pk).where(chat_feeds.c.chat_pk == chat_pk))
    return row.first() is not None


async def issue(conn: AsyncConnection, *, chat_pk: int, now: dt.datetime | None = None) -> str:
    """A new token for the chat's feed; the one it had stops working. Only its hash is kept."""
    token = feeds.new_token()
    await conn.execute(delete(chat_feeds).where(chat_feeds.c.chat_pk == chat_pk))
    await conn.execute(
        insert(chat_feeds).values(
            chat_pk=chat_pk, token_hash=feeds.token_hash(token), created_at=now or utcnow()
        )
    )
    return token


async def owner(conn: AsyncConnection, token: str) -> FeedOwner | None:
    """The chat whose feed ``token`` opens, or None.

    The lookup is by the token's hash (an index), so the time it takes says nothing about
    the token; the hash found is compared once more in constant time all the same.
    """
    wanted = feeds.token_hash(token)
    row = (
        (
            await conn.execute(
                select(
                    chats,
                    chat_feeds.c.token_hash,
                    chat_feeds.c.created_at.label("feed_created_at"),
                )
                .join(chat_feeds, chat_feeds.c.chat_pk == chats.c.id)
                .where(chat_feeds.c.token_hash == wanted)
            )
        )
        .mappings()
        .first()
    )
    if row is None or not hmac.compare_digest(row["token_hash"], wanted):
        return None
    return FeedOwner(
        record=chat_store.record_from_row(row),
        token_hash=row["token_hash"],
        created_at=row["feed_created_at"],
        chat_updated_at=row["updated_at"],
    )


async def entries(
    conn: AsyncConnection, chat_filter: Filter, *, count: int = feeds.MAX_ENTRIES
) -> list[feeds.FeedEntry]:
    """The ``count`` newest current pages (one a paper, see :mod:`bot.store.current`)
    ``chat_filter`` matches, newest first (the order of ``latest``: wiki date, then first
    seen)."""
    if chat_filter.is_empty:
        return []
    found: list[feeds.FeedEntry] = []
    offset, limit = 0, count * SCAN_FACTOR
    while True:
        ids = await current.newest_page_ids(conn, limit=limit, offset=offset)
        changed = dict(
            (await conn.execute(select(pages.c.id, pages.c.changed_at).where(pages.c.id.in_(ids))))
            .tuples()
            .all()
        )
        loaded = await load_pages(conn, ids)
        for page_id in ids:
            changed_at = changed[page_id]
            page = loaded.get(page_id)
            if page is None or not filters.matches(chat_filter, page.tags):
                continue
            updated = (
                dt.datetime.combine(page.date, dt.time()) if page.date is not None else changed_at
            )
            item = DigestItem(page=page, matched=filters.matched_tags(chat_filter, page.tags))
            found.append(feeds.FeedEntry(item=item, updated=updated))
            if len(found) == count:
                return found
        if len(ids) < limit:
            return found
        offset += limit
        limit *= 2


@dataclass(frozen=True, slots=True)
class FeedDocument:
    """What ``GET /feeds/TOKEN.atom`` shows, read in one transaction."""

    owner: FeedOwner
    entries: list[feeds.FeedEntry]
    changed: dt.datetime  # the latest change of the pages shown (``current.last_change``)


async def document(engine: AsyncEngine, token: str) -> FeedDocument | None:
    """The feed of ``token`` (read-only), or None when no chat has that token."""
    async with reader(engine).connect() as conn:
        found = await owner(conn, token)
        if found is None:
            return None
        return FeedDocument(
            owner=found,
            entries=await entries(conn, found.record.chat.filter),
            changed=await current.last_change(conn),
        )
