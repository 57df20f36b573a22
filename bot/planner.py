"""Planning: page events x chats -> outbox rows, in the same transaction as the ledger.

For each active chat, the events after its cursor are matched against its filter. A page
the chat never had is offered as new; a page it had in an older version (its TL;DR or
date changed) is offered as updated; anything else is skipped. The outbox row, the ledger
rows (``chat_pages``) and the chat's new cursor are written together, so a page is
planned for a chat at most once per version, whatever crashes.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from sqlalchemy import bindparam, func, literal_column, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot import filters, schedule
from bot.i18n import tn
from bot.models import ChatState, Filter, Mode
from bot.store import chats as chat_store
from bot.store import outbox
from bot.store.engine import reader
from bot.store.pages import chunks, utcnow
from bot.store.schema import chat_pages, chats, page_events, page_tags, pages

log = logging.getLogger("bot.planner")

# Chats planned per transaction: large enough to amortise the queries and commits, small
# enough to keep a transaction (and SQLite's write lock) short: 2,000 chats of 14 new pages
# each write in about 0.2 s. (At 1,000, planning 100,000 chats took 15 % longer on SQLite:
# more commits, more WAL checkpoints over the same pages.)
BATCH = 2000
# Batches planned at once on PostgreSQL, each in its own transaction: while the server
# writes one batch's ledger rows (most of its time), the next is worked out here. Chats
# locked by one are skipped by the others, as between replicas.
PG_WORKERS = 3
DIGEST_PRIORITY = 10  # digests and instant pages go before broadcasts within a chat
# The welcome digest (a chat's first): matching pages of the last ``welcome_days`` days, at
# most WELCOME_MAX of them; when none is that recent, the newest WELCOME_MIN matching pages.
WELCOME_MAX = 10
WELCOME_MIN = 5
# Pages looked through for a welcome digest, newest first: a filter that matches none of
# the newest 500 pages gets no welcome, which keeps planning a thousand new chats cheap.
WELCOME_POOL = 500


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


class _Chat(NamedTuple):
    """What planning reads of a chat: a few columns, not a whole :class:`ChatRecord`."""

    pk: int
    platform: str
    mode: str
    digest_time: str  # HH:MM, local
    timezone: str
    filter: Filter
    cursor: int
    next_digest_at: dt.datetime | None
    had_pages: bool = True  # whether any page was ever planned for it (False: welcome it)


_CHAT_COLUMNS = (
    chats.c.id,
    chats.c.platform,
    chats.c.mode,
    chats.c.digest_time,
    chats.c.timezone,
    chats.c.filter,
    chats.c.cursor,
    chats.c.next_digest_at,
)

Offer = tuple[int, bool, str]  # (page_id, is_update, fingerprint)


class _Welcome:
    """The pages of welcome digests, for a planning run: the newest pages are read once
    (on the first chat that needs them) and matched once per filter."""

    def __init__(self, days: int, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self._days = days
        self._pool: list[tuple[int, str, dt.date, frozenset[str]]] | None = None
        self._by_filter: dict[Filter, tuple[Offer, ...]] = {}

    async def offers(
        self, conn: AsyncConnection, f: Filter, *, now: dt.datetime
    ) -> tuple[Offer, ...]:
        """The welcome pages for a chat with filter ``f``, newest first."""
        found = self._by_filter.get(f)
        if found is not None:
            return found
        if self._pool is None:
            self._pool = await _newest_pages(conn, limit=WELCOME_POOL)
        cutoff = now.date() - dt.timedelta(days=self._days)
        matching = [
            (page_id, fp, day)
            for page_id, fp, day, tags in self._pool
            if filters.matches_normalized(f, tags)
        ]
        recent = [(page_id, fp) for page_id, fp, day in matching if day >= cutoff][:WELCOME_MAX]
        if not recent:
            recent = [(page_id, fp) for page_id, fp, _ in matching[:WELCOME_MIN]]
        found = self._by_filter[f] = tuple((page_id, False, fp) for page_id, fp in recent)
        return found


async def _newest_pages(
    conn: AsyncConnection, *, limit: int
) -> list[tuple[int, str, dt.date, frozenset[str]]]:
    """The newest present pages (by wiki date, else when first seen): id, fingerprint,
    date and normalised tags."""
    date = func.coalesce(pages.c.updated, pages.c.created)
    rows = (
        await conn.execute(
            select(pages.c.id, pages.c.fingerprint, date, pages.c.first_seen_at)
            .where(pages.c.removed_at.is_(None))
            .order_by(date.desc().nulls_last(), pages.c.first_seen_at.desc(), pages.c.id.desc())
            .limit(limit)
        )
    ).all()
    tags: dict[int, list[str]] = {}
    for part in chunks([row[0] for row in rows]):
        for page_id, tag in await conn.execute(
            select(page_tags.c.page_id, page_tags.c.tag).where(page_tags.c.page_id.in_(part))
        ):
            tags.setdefault(page_id, []).append(tag)
    return [
        (page_id, fp, day or seen.date(), filters.normalized_tags(tags.get(page_id, ())))
        for page_id, fp, day, seen in rows
    ]


class _Offers:
    """Which pages each chat should get, from one window of events.

    What depends only on a chat's cursor (the latest event of each page after it) or on its
    cursor and filter (which of those pages match) is worked out once and shared by all
    the chats of a planning run while the window stays the same: chats share a few cursors
    and a few thousand filters, and matching every event against every chat's filter was
    most of the planner's time at 100,000 chats.
    """

    def __init__(self, window: _Window) -> None:
        self.window = window
        self._tags = {page_id: filters.normalized_tags(t) for page_id, t in window.tags.items()}
        self._after: dict[int, tuple[dict[int, Event], set[int]]] = {}
        # (cursor, filter) -> the matching pages' latest events, whether each was new, and
        # the offers to a chat that never had any of them.
        self._matching: dict[
            tuple[int, Filter], tuple[list[tuple[Event, bool]], tuple[Offer, ...]]
        ] = {}

    def __call__(self, chat: _Chat, ledger: dict[int, str] | None) -> tuple[Offer, ...]:
        """The offers to ``chat``, in event order; ``ledger``: the fingerprints it had.

        A page the chat never had is offered if it was new after the chat's cursor; a page
        it had is offered again when its fingerprint changed; anything else is not.
        """
        key = (chat.cursor, chat.filter)
        found = self._matching.get(key)
        if found is None:
            latest, seen_new = self._latest_after(chat.cursor)
            f, tags, untagged = chat.filter, self._tags, frozenset[str]()
            candidates = [
                (event, page_id in seen_new)
                for page_id, event in latest.items()
                if filters.matches_normalized(f, tags.get(page_id, untagged))
            ]
            fresh = tuple((e.page_id, False, e.fingerprint) for e, new in candidates if new)
            found = self._matching[key] = (candidates, fresh)
        candidates, fresh = found
        if not ledger:
            return fresh
        offers = []
        for event, new in candidates:
            had = ledger.get(event.page_id)
            if had is None:
                if new:
                    offers.append((event.page_id, False, event.fingerprint))
            elif had != event.fingerprint:
                offers.append((event.page_id, True, event.fingerprint))
        return tuple(offers)

    def _latest_after(self, cursor: int) -> tuple[dict[int, Event], set[int]]:
        """The latest event of each page after ``cursor`` (in order of each page's first
        event), and the pages that were new after it."""
        found = self._after.get(cursor)
        if found is None:
            latest: dict[int, Event] = {}
            seen_new: set[int] = set()
            for event in self.window.events:
                if event.id <= cursor:
                    continue
                latest[event.page_id] = event
                if event.new:
                    seen_new.add(event.page_id)
            found = self._after[cursor] = (latest, seen_new)
        return found


@dataclass(slots=True)
class _Run:
    """One planning run: what its batches share."""

    where: object
    now: dt.datetime
    advance_schedule: bool
    count_pages: bool
    messages: _Messages
    welcome: _Welcome
    after_pk: int = 0  # the next batch takes chats after this one
    offers: _Offers | None = None  # kept from batch to batch while the window is the same
    written: int = 0


class Planner:
    """Plans digests and instant pages.

    A chat that never had a page planned gets a welcome with its first digest (and with
    ``digest`` in instant mode): the newest matching pages of the last ``welcome_days``
    days, or the newest few when none is that recent, marked as "to get you started".
    Those pages enter the ledger like any other, so the welcome never repeats.
    """

    def __init__(
        self, *, engine: AsyncEngine, welcome_days: int = 30, welcome: bool = True
    ) -> None:
        self._engine = engine
        self._welcome_days = welcome_days
        self._welcome = welcome

    async def plan_due(self, *, now: dt.datetime | None = None) -> int:
        """Plan every instant chat with news and every daily chat whose time has come.

        Returns the number of outbox rows written.
        """
        now = now or utcnow()
        async with reader(self._engine).connect() as conn:
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
        run = _Run(
            where=where,
            now=now,
            advance_schedule=advance_schedule,
            count_pages=count_pages,
            messages=_Messages(now),
            welcome=_Welcome(self._welcome_days, enabled=self._welcome),
        )
        if self._engine.dialect.name != "postgresql":
            await self._plan_batches(run)  # one writer at a time anyway
            return run.written
        tasks = [asyncio.create_task(self._plan_batches(run)) for _ in range(PG_WORKERS)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return run.written

    async def _plan_batches(self, run: _Run) -> None:
        """Plan batch after batch of the run's chats, one transaction each, until none is
        left; on PostgreSQL several of these share a run (see ``PG_WORKERS``)."""
        while True:
            async with self._engine.begin() as conn:
                postgres = conn.dialect.name == "postgresql"
                # Batches walk the primary key. For ``state = ?`` SQLite would pick ix_chats_due
                # and sort every chat by id again for each batch (30 ms a batch at 100,000
                # chats); its unary + keeps a column's term off the indexes.
                state = chats.c.state if postgres else literal_column("+chats.state")
                had_pages = (
                    select(chat_pages.c.page_id)
                    .where(chat_pages.c.chat_pk == chats.c.id)
                    .exists()
                    .label("had_pages")
                )
                query = (
                    select(*_CHAT_COLUMNS, had_pages)
                    .where(state == ChatState.ACTIVE.value, chats.c.id > run.after_pk)
                    .order_by(chats.c.id)
                    .limit(BATCH)
                )
                if run.where is not None:
                    query = query.where(run.where)  # type: ignore[arg-type]
                if postgres:
                    # Other workers and replicas skip the chats locked here. Only the cursor
                    # and schedule change: the lock leaves rows that refer to a chat free,
                    # and holds off deleting the chat until its ledger rows are committed
                    # (the delete's trigger then removes them).
                    query = query.with_for_update(skip_locked=True, key_share=True)
                batch = [
                    _Chat(
                        pk, platform, mode, at, tz, chat_store.filter_of(text), cur, nxt, bool(had)
                    )
                    for pk, platform, mode, at, tz, text, cur, nxt, had in await conn.execute(query)
                ]
                if not batch:
                    return
                run.after_pk = max(run.after_pk, batch[-1].pk)  # the next batch goes on from here
                window = await _window(conn, min(c.cursor for c in batch))
                if run.offers is None or run.offers.window != window:
                    run.offers = _Offers(window)
                written = await self._plan_batch(
                    conn,
                    batch,
                    run.offers,
                    run.messages,
                    run.welcome,
                    now=run.now,
                    advance_schedule=run.advance_schedule,
                    count_pages=run.count_pages,
                )
                run.written += written  # not ``+= await``: another batch may add meanwhile

    async def _plan_batch(
        self,
        conn: AsyncConnection,
        batch: list[_Chat],
        offers_for: _Offers,
        messages: _Messages,
        welcome: _Welcome,
        *,
        now: dt.datetime,
        advance_schedule: bool,
        count_pages: bool,
    ) -> int:
        window = offers_for.window
        ledger = await _ledger(conn, batch, window)
        stamp = utcnow()  # when rows are written; ``now`` is the clock the schedule runs on
        rows: list[dict[str, object]] = []
        new_ledger: list[tuple[int, int, str]] = []
        changed_ledger: list[dict[str, object]] = []
        rescheduled: dict[dt.datetime, list[int]] = {}  # next digest -> chats
        pages_planned = 0
        for chat in batch:
            offers = offers_for(chat, ledger.get(chat.pk))
            ledger_before = len(new_ledger)
            daily = chat.mode == Mode.DAILY.value
            welcomed = False
            if (
                welcome.enabled
                and not chat.had_pages
                and not chat.filter.is_empty
                and (daily or not advance_schedule)
            ):
                offered = {page_id for page_id, _, _ in offers}
                extra = tuple(
                    o
                    for o in await welcome.offers(conn, chat.filter, now=now)
                    if o[0] not in offered
                )
                if extra:
                    offers, welcomed = offers + extra, True
            if offers:
                if daily or welcomed:
                    rows.append(messages.digest(chat, offers, stamp=stamp, welcome=welcomed))
                else:
                    rows.extend(messages.pages(chat, offers, stamp=stamp))
                pages_planned += len(offers)
                pk = chat.pk
                new_ledger += [(pk, page_id, fp) for page_id, updated, fp in offers if not updated]
                if len(new_ledger) - ledger_before != len(offers):
                    changed_ledger += [
                        {"c": pk, "p": page_id, "f": fp, "t": stamp}
                        for page_id, updated, fp in offers
                        if updated
                    ]
            if (
                advance_schedule
                and daily
                and (chat.next_digest_at is None or chat.next_digest_at <= now)
            ):
                rescheduled.setdefault(messages.next_due(chat), []).append(chat.pk)

        await outbox.enqueue(conn, rows)
        await outbox.record_planned(conn, new_ledger, at=stamp)
        if changed_ledger:
            await conn.execute(
                update(chat_pages)
                .where(
                    chat_pages.c.chat_pk == bindparam("c"), chat_pages.c.page_id == bindparam("p")
                )
                .values(fingerprint=bindparam("f"), planned_at=bindparam("t")),
                changed_ledger,
            )
        # Every chat of the batch has now seen the window: its cursor moves to the window's
        # end (never back), in one statement per chunk rather than one row at a time.
        if window.last_id:
            for pk_part in chunks([c.pk for c in batch]):
                await conn.execute(
                    update(chats)
                    .where(chats.c.id.in_(pk_part), chats.c.cursor < window.last_id)
                    .values(cursor=window.last_id)
                )
        for due, due_pks in rescheduled.items():
            for pk_part in chunks(due_pks):
                await conn.execute(
                    update(chats).where(chats.c.id.in_(pk_part)).values(next_digest_at=due)
                )
        if rows:
            log.info(
                "planned %s for %s",
                tn("en", "log.messages", len(rows)),
                tn("en", "log.chats", len(batch)),
            )
        return pages_planned if count_pages else len(rows)


async def _ledger(
    conn: AsyncConnection, batch: Sequence[_Chat], window: _Window
) -> dict[int, dict[int, str]]:
    """The fingerprints the chats of ``batch`` had of the window's pages, by chat.

    A batch is a run of primary keys, so the rows are read by range (other chats' rows in
    the range are left out here) instead of by a list of every key.
    """
    page_ids = sorted(window.tags.keys() | {e.page_id for e in window.events})
    wanted = {c.pk for c in batch}
    first, last = batch[0].pk, batch[-1].pk
    ledger: dict[int, dict[int, str]] = {}
    for page_part in chunks(page_ids):
        rows = await conn.execute(
            select(chat_pages.c.chat_pk, chat_pages.c.page_id, chat_pages.c.fingerprint).where(
                chat_pages.c.chat_pk.between(first, last), chat_pages.c.page_id.in_(page_part)
            )
        )
        for chat_pk, page_id, fingerprint in rows:
            if chat_pk in wanted:
                ledger.setdefault(chat_pk, {})[page_id] = fingerprint
    return ledger


class _Messages:
    """Outbox rows for a planning run. Chats with the same offers on the same day get the
    same payload: it is made (and JSON-encoded) once, not once per chat."""

    def __init__(self, now: dt.datetime) -> None:
        self._now = now
        self._days: dict[str, dt.date] = {}  # the date ``now`` is, by time zone
        self._next_dues: dict[tuple[str, str], dt.datetime] = {}
        self._digests: dict[tuple[str, tuple[Offer, ...], dt.date, bool], dict[str, object]] = {}

    def digest(
        self, chat: _Chat, offers: tuple[Offer, ...], *, stamp: dt.datetime, welcome: bool = False
    ) -> dict[str, object]:
        """A digest row; ``welcome``: the chat's first, marked "to get you started"."""
        day = self._days.get(chat.timezone)
        if day is None:
            day = self._days[chat.timezone] = schedule.local_date(self._now, chat.timezone)
        key = (chat.platform, offers, day, welcome)
        template = self._digests.get(key)
        if template is None:
            payload: dict[str, object] = {
                "pages": [[p, u] for p, u, _ in offers],
                "date": day.isoformat(),
            }
            if welcome:
                payload["welcome"] = True
            template = self._digests[key] = outbox.row_values(
                chat_pk=chat.pk,
                platform=chat.platform,
                kind="digest",
                payload=payload,
                now=stamp,
                priority=DIGEST_PRIORITY,
            )
        return outbox.row_for(template, chat_pk=chat.pk, now=stamp)

    def pages(
        self, chat: _Chat, offers: tuple[Offer, ...], *, stamp: dt.datetime
    ) -> list[dict[str, object]]:
        """Instant mode: one message per page."""
        return [
            outbox.row_values(
                chat_pk=chat.pk,
                platform=chat.platform,
                kind="page",
                payload={"pages": [[page_id, is_update]]},
                now=stamp,
                priority=DIGEST_PRIORITY,
            )
            for page_id, is_update, _fp in offers
        ]

    def next_due(self, chat: _Chat) -> dt.datetime:
        """When the chat's next digest is due after this one, as naive UTC."""
        key = (chat.digest_time, chat.timezone)
        due = self._next_dues.get(key)
        if due is None:
            hour, minute = (int(x) for x in chat.digest_time.split(":"))
            due = self._next_dues[key] = schedule.naive_utc(
                schedule.next_due(at=dt.time(hour, minute), timezone=chat.timezone, after=self._now)
            )
        return due
