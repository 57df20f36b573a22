"""Planning: page events x chats -> outbox rows, in the same transaction as the ledger.

For each active chat, the events after its cursor are matched against its filter. A page
the chat never had is offered as new; a page it had in an older version (its TL;DR or
date changed) is offered as updated; anything else is skipped. The outbox row, the ledger
rows (``chat_pages``) and the chat's new cursor are written together, so a page is
planned for a chat at most once per version, whatever crashes.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot import filters, schedule
from bot.models import ChatState, Mode
from bot.store import chats as chat_store
from bot.store import outbox
from bot.store.chats import ChatRecord
from bot.store.pages import chunks, utcnow
from bot.store.schema import chat_pages, chats, page_events, page_tags

log = logging.getLogger("bot.planner")

# Chats planned per transaction: large enough to amortise the queries, small enough to
# keep a transaction (and SQLite's write lock) short.
BATCH = 1000
DIGEST_PRIORITY = 10  # digests and instant pages go before broadcasts within a chat


@dataclass(frozen=True, slots=True)
class Event:
    id: int
    page_id: int
    new: bool
    fingerprint: str


@dataclass(slots=True)
class _Window:
    """The events after some cursor, with the tags of their pages."""

    events: list[Event]
    tags: dict[int, tuple[str, ...]]

    @property
    def last_id(self) -> int:
        return self.events[-1].id if self.events else 0


async def _window(conn: AsyncConnection, after: int) -> _Window:
    rows = await conn.execute(
        select(
            page_events.c.id, page_events.c.page_id, page_events.c.kind, page_events.c.fingerprint
        )
        .where(page_events.c.id > after)
        .order_by(page_events.c.id)
    )
    events = [Event(id=i, page_id=p, new=k == "new", fingerprint=f) for i, p, k, f in rows]
    tags: dict[int, list[str]] = {}
    page_ids = sorted({e.page_id for e in events})
    for part in chunks(page_ids):
        tag_rows = await conn.execute(
            select(page_tags.c.page_id, page_tags.c.tag)
            .where(page_tags.c.page_id.in_(part))
            .order_by(page_tags.c.page_id, page_tags.c.position)
        )
        for page_id, tag in tag_rows:
            tags.setdefault(page_id, []).append(tag)
    return _Window(events=events, tags={k: tuple(v) for k, v in tags.items()})


def _offers(
    record: ChatRecord, window: _Window, ledger: dict[int, str]
) -> list[tuple[int, bool, str]]:
    """(page_id, is_update, fingerprint) the chat should get, in event order."""
    latest: dict[int, Event] = {}
    seen_new: set[int] = set()
    for event in window.events:
        if event.id <= record.cursor:
            continue
        latest[event.page_id] = event
        if event.new:
            seen_new.add(event.page_id)
    offers = []
    for page_id, event in latest.items():
        if not filters.matches(record.chat.filter, window.tags.get(page_id, ())):
            continue
        had = ledger.get(page_id)
        if had is None:
            if page_id in seen_new:
                offers.append((page_id, False, event.fingerprint))
        elif had != event.fingerprint:
            offers.append((page_id, True, event.fingerprint))
    return offers


class Planner:
    def __init__(self, *, engine: AsyncEngine) -> None:
        self._engine = engine

    async def plan_due(self, *, now: dt.datetime | None = None) -> int:
        """Plan every instant chat with news and every daily chat whose time has come.

        Returns the number of outbox rows written.
        """
        now = now or utcnow()
        async with self._engine.connect() as conn:
            latest = await chat_store.latest_event_id(conn)
        due = ((chats.c.mode == Mode.INSTANT.value) & (chats.c.cursor < latest)) | (
            chats.c.next_digest_at <= now
        )
        return await self._plan(where=due, now=now, advance_schedule=True)

    async def plan_now(self, *, chat_pks: Sequence[int] | None = None) -> int:
        """Plan now, whatever the schedule: ``digest --now`` and the ``digest`` command.

        The next scheduled digest stays where it is and carries only what came after.
        """
        where = chats.c.id.in_(list(chat_pks)) if chat_pks is not None else None
        return await self._plan(where=where, now=utcnow(), advance_schedule=False)

    async def send_now(self, chat_pk: int) -> int:
        """The ``digest`` command: plan this chat now; returns the pages planned."""
        return await self._plan(
            where=chats.c.id == chat_pk, now=utcnow(), advance_schedule=False, count_pages=True
        )

    async def _plan(
        self,
        *,
        where: object,
        now: dt.datetime,
        advance_schedule: bool,
        count_pages: bool = False,
    ) -> int:
        written = 0
        after_pk = 0
        while True:
            async with self._engine.begin() as conn:
                query = (
                    select(chats)
                    .where(chats.c.state == ChatState.ACTIVE.value, chats.c.id > after_pk)
                    .order_by(chats.c.id)
                    .limit(BATCH)
                )
                if where is not None:
                    query = query.where(where)  # type: ignore[arg-type]
                if conn.dialect.name == "postgresql":
                    query = query.with_for_update(skip_locked=True)
                rows = (await conn.execute(query)).mappings().all()
                if not rows:
                    return written
                records = [chat_store.record_from_row(r) for r in rows]
                written += await self._plan_batch(
                    conn,
                    records,
                    now=now,
                    advance_schedule=advance_schedule,
                    count_pages=count_pages,
                )
                after_pk = records[-1].pk

    async def _plan_batch(
        self,
        conn: AsyncConnection,
        records: list[ChatRecord],
        *,
        now: dt.datetime,
        advance_schedule: bool,
        count_pages: bool,
    ) -> int:
        window = await _window(conn, min(r.cursor for r in records))
        ledger: dict[int, dict[int, str]] = {}
        page_ids = sorted(window.tags.keys() | {e.page_id for e in window.events})
        pks = [r.pk for r in records]
        for pk_part in chunks(pks, 400):
            for page_part in chunks(page_ids, 400):
                rows = await conn.execute(
                    select(
                        chat_pages.c.chat_pk, chat_pages.c.page_id, chat_pages.c.fingerprint
                    ).where(chat_pages.c.chat_pk.in_(pk_part), chat_pages.c.page_id.in_(page_part))
                )
                for chat_pk, page_id, fingerprint in rows:
                    ledger.setdefault(chat_pk, {})[page_id] = fingerprint

        stamp = utcnow()  # when rows are written; ``now`` is the clock the schedule runs on
        messages: list[dict[str, object]] = []
        new_ledger: list[dict[str, object]] = []
        changed_ledger: list[dict[str, object]] = []
        cursors: list[dict[str, object]] = []
        pages_planned = 0
        for record in records:
            offers = _offers(record, window, ledger.get(record.pk, {}))
            chat = record.chat
            if offers:
                if chat.mode == Mode.INSTANT:
                    for page_id, is_update, _fp in offers:
                        messages.append(
                            outbox.row_values(
                                chat_pk=record.pk,
                                platform=chat.platform.value,
                                kind="page",
                                payload={"pages": [[page_id, is_update]]},
                                now=stamp,
                                priority=DIGEST_PRIORITY,
                            )
                        )
                else:
                    day = schedule.local_date(now, chat.timezone)
                    messages.append(
                        outbox.row_values(
                            chat_pk=record.pk,
                            platform=chat.platform.value,
                            kind="digest",
                            payload={
                                "pages": [[p, u] for p, u, _ in offers],
                                "date": day.isoformat(),
                            },
                            now=stamp,
                            priority=DIGEST_PRIORITY,
                        )
                    )
                pages_planned += len(offers)
                for page_id, is_update, fingerprint in offers:
                    row = {"c": record.pk, "p": page_id, "f": fingerprint, "t": stamp}
                    (changed_ledger if is_update else new_ledger).append(row)
            values: dict[str, object] = {"pk": record.pk, "cur": max(record.cursor, window.last_id)}
            if (
                advance_schedule
                and chat.mode == Mode.DAILY
                and (record.next_digest_at is None or record.next_digest_at <= now)
            ):
                values["nxt"] = schedule.naive_utc(
                    schedule.next_due(at=chat.digest_time, timezone=chat.timezone, after=now)
                )
            else:
                values["nxt"] = record.next_digest_at
            cursors.append(values)

        await outbox.enqueue(conn, messages)
        for part in chunks(new_ledger, 2000):
            await conn.execute(
                insert(chat_pages),
                [
                    {
                        "chat_pk": r["c"],
                        "page_id": r["p"],
                        "fingerprint": r["f"],
                        "planned_at": r["t"],
                    }
                    for r in part
                ],
            )
        if changed_ledger:
            await conn.execute(
                update(chat_pages)
                .where(
                    chat_pages.c.chat_pk == bindparam("c"), chat_pages.c.page_id == bindparam("p")
                )
                .values(fingerprint=bindparam("f"), planned_at=bindparam("t")),
                changed_ledger,
            )
        await conn.execute(
            update(chats)
            .where(chats.c.id == bindparam("pk"))
            .values(cursor=bindparam("cur"), next_digest_at=bindparam("nxt")),
            cursors,
        )
        if messages:
            log.info("planned %d messages for %d chats", len(messages), len(records))
        return pages_planned if count_pages else len(messages)
