"""Pages now: ``latest``, ``digest``, and how many a digest shows: ``limit``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.commands.base import Caller, Context, Ports, chat_record, save
from bot.commands.registry import EVERYONE, MANAGERS, Menu, command
from bot.i18n import t, tn
from bot.models import (
    ChatState,
    DigestItem,
    Filter,
    Mode,
    Reply,
)
from bot.rules import filters, ranking
from bot.store import chats as chat_store
from bot.store import current
from bot.store import feedback as feedback_store
from bot.store import pages as page_store

LATEST_DEFAULT = 5
LATEST_MAX = 20
# `latest` reads this many newest pages per page it shows, then twice as many each round,
# until enough match: most filters match within the first round.
LATEST_SCAN_FACTOR = 4
LIMIT_MAX = 50

log = logging.getLogger("bot.commands")
# ``latest``'s records of the pages it showed, under way (a task must be held to run).
_RECORDING: set[asyncio.Task[None]] = set()
SHOWN_WAIT_SECONDS = 0.5


# `latest` writes: the pages it shows take the chat's votes from then on.
@command(
    "latest",
    order=130,
    audience=EVERYONE,
    slow=True,
    menu=Menu.GROUP,
    usage="[N]",
)
async def latest_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    count = LATEST_DEFAULT
    if args.strip():
        try:
            count = int(args.strip())
        except ValueError:
            return Reply(lang, t(lang, "latest.usage", p=ctx.prefix))
        if not 1 <= count <= LATEST_MAX:
            return Reply(lang, t(lang, "latest.usage", p=ctx.prefix))
    chat_filter = record.chat.filter
    if chat_filter.is_empty:
        return Reply(lang, t(lang, "latest.no_filter", p=ctx.prefix))
    items = await _newest_matching(ctx.conn, chat_filter, count)
    if not items:
        return Reply(lang, t(lang, "latest.none"))
    # In the order of a digest: the chat's ranking, then more matched tags, then newest.
    items.sort(key=lambda item: -len(item.matched))  # stable: newest first among equals
    weights = await feedback_store.weights_of(ctx.conn, chat_pk=record.pk)
    items = [items[i] for i in ranking.order([i.page.tags for i in items], weights)]
    shown = [item.page_id for item in items if item.page_id is not None]
    await _record_shown(ctx.ports.engine, record.pk, shown)
    return Reply(lang, tn(lang, "latest.header", len(items)), items=tuple(items))


async def _record_shown(engine: AsyncEngine, chat_pk: int, page_ids: list[int]) -> None:
    """Record that the chat was shown ``page_ids`` (their votes count from then on), in
    a transaction of its own. ``latest`` only reads: while another process writes (on
    SQLite, holds the write lock) the reply waits at most :data:`SHOWN_WAIT_SECONDS` for
    the record, which then goes on beside it."""

    async def record() -> None:
        try:
            async with engine.begin() as conn:
                await feedback_store.shown(conn, chat_pk=chat_pk, page_ids=page_ids)
        except Exception as exc:  # the database is away: those pages take no vote
            log.warning("latest: could not record the pages shown: %s", type(exc).__name__)

    task = asyncio.get_running_loop().create_task(record())
    _RECORDING.add(task)
    task.add_done_callback(_RECORDING.discard)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(task), SHOWN_WAIT_SECONDS)


async def _newest_matching(
    conn: AsyncConnection, chat_filter: Filter, count: int
) -> list[DigestItem]:
    """The ``count`` newest present pages ``chat_filter`` matches, newest first.

    Pages are read in rounds, newest first: :data:`LATEST_SCAN_FACTOR` per page wanted,
    then twice as many each round, so a common filter costs one small read and a rare
    one a few; only a filter that matches almost nothing reads the whole wiki.
    """
    found: list[DigestItem] = []
    seen: set[int] = set()
    limit = count * LATEST_SCAN_FACTOR
    while True:
        ids = await current.newest_page_ids(conn, limit=limit)
        fresh = [i for i in ids if i not in seen]
        seen.update(fresh)
        loaded = await page_store.load_pages(conn, fresh) if fresh else {}
        for page_id in fresh:
            page = loaded.get(page_id)
            if page is not None and filters.matches(chat_filter, page.tags):
                matched = filters.matched_tags(chat_filter, page.tags)
                found.append(DigestItem(page=page, matched=matched, page_id=page_id))
                if len(found) == count:
                    return found
        if len(ids) < limit:
            return found
        limit *= 2


@command("limit", order=150, audience=MANAGERS, writes=True)
async def limit_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    word = args.strip().lower()
    if not word:
        off = record.chat.limit is None
        key = "digestq.limit.current_off" if off else "digestq.limit.current"
        return Reply(lang, t(lang, key, count=record.chat.limit, p=ctx.prefix, most=LIMIT_MAX))
    if word == "off":
        await save(ctx.conn, record, replace(record.chat, limit=None))
        return Reply(lang, t(lang, "digestq.limit.off"))
    if not (word.isascii() and word.isdigit() and 1 <= int(word) <= LIMIT_MAX):
        return Reply(lang, t(lang, "digestq.limit.usage", p=ctx.prefix, most=LIMIT_MAX))
    count = int(word)
    await save(ctx.conn, record, replace(record.chat, limit=count))
    return Reply(lang, t(lang, "digestq.limit.set", count=count, p=ctx.prefix))


# `digest` changes no setting: it sends the group's digest early, and a refusal says so.
@command(
    "digest",
    order=140,
    audience=MANAGERS,
    alone=True,
    slow=True,
    group_refusal="cmd.group_admins_only_digest",
)
async def digest_command(
    ports: Ports, caller: Caller, *, name: str, args: str, prefix: str
) -> Reply:
    """``digest`` plans outside the chat's transaction (planning opens its own)."""
    record = await ports.in_chat(caller, chat_record, write=False)
    lang = record.chat.lang
    if record.chat.state != ChatState.ACTIVE:
        return Reply(lang, t(lang, "digest.paused", p=prefix))
    if ports.digests is None:
        return Reply(lang, t(lang, "digest.unavailable"))
    if record.chat.filter.is_empty:
        return Reply(lang, t(lang, "digest.no_filter", p=prefix))
    chat = record.chat
    # Pages go in one digest, cut at the limit, unless an instant chat that was
    # welcomed already gets them one message each (as the planner decides).
    async with ports.reader.connect() as conn:
        one_digest = chat.mode != Mode.INSTANT or not await chat_store.had_pages(conn, record.pk)
    # Outside the chat's transaction: planning opens its own, which writes.
    count = await ports.digests.send_now(record.pk)
    if count == 0:
        return Reply(lang, t(lang, "digest.nothing"))
    if one_digest and chat.limit is not None and count > chat.limit:
        text = t(
            lang,
            "digest.queued_limited",
            shown=chat.limit,
            count=count,
            rest=count - chat.limit,
            p=prefix,
        )
        return Reply(lang, text)
    return Reply(lang, tn(lang, "digest.queued", count))
