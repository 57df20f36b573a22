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
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot import payloads
from bot.i18n import tn
from bot.matching.offers import Offer, Offers, PlannedChat, Welcome
from bot.models import QuietHours
from bot.rules import schedule
from bot.store import chats as chat_store
from bot.store import feedback, planning, queueing
from bot.store.planning import Window as _Window
from bot.util import utcnow

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


@dataclass(slots=True)
class _Run:
    """One planning run: what its batches share."""

    where: planning.Selection
    now: dt.datetime
    advance_schedule: bool
    count_pages: bool
    messages: _Messages
    welcome: Welcome
    after_pk: int = 0  # the next batch takes chats after this one
    offers: Offers | None = None  # kept from batch to batch while the window is the same
    written: int = 0


class Planner:
    """Plans digests and instant pages.

    A chat that never had a page planned gets a welcome with its first digest (and with
    ``digest`` in instant mode): the newest matching pages of the last ``welcome_days``
    days, or the newest few when none is that recent, marked as "to get you started".
    Those pages enter the ledger like any other, so the welcome never repeats.
    """

    def __init__(
        self,
        *,
        engine: AsyncEngine,
        welcome_days: int = 30,
        welcome: bool = True,
        batch: int = BATCH,
    ) -> None:
        self._engine = engine
        self._batch = batch
        self._welcome_days = welcome_days
        self._welcome = welcome

    async def plan_due(self, *, now: dt.datetime | None = None) -> int:
        """Plan every instant chat with news and every daily chat whose time has come.

        Returns the number of outbox rows written.
        """
        now = now or utcnow()
        latest = await planning.latest_event_id(self._engine)
        due = planning.Due(now=now, latest_event=latest)
        return await self._plan(where=due, now=now, advance_schedule=True)

    async def plan_now(self, *, chat_pks: Sequence[int] | None = None) -> int:
        """Plan now, whatever the schedule: ``digest --now`` and the ``digest`` command.

        The next scheduled digest stays where it is and carries only what came after.
        """
        where = planning.Only(tuple(chat_pks) if chat_pks is not None else None)
        return await self._plan(where=where, now=utcnow(), advance_schedule=False)

    async def send_now(self, chat_pk: int) -> int:
        """The ``digest`` command: plan this chat now; returns the pages planned."""
        return await self._plan(
            where=planning.One(chat_pk), now=utcnow(), advance_schedule=False, count_pages=True
        )

    async def _plan(
        self,
        *,
        where: planning.Selection,
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
            welcome=Welcome(self._welcome_days, enabled=self._welcome),
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
                rows = await planning.lock_batch(
                    conn, selection=run.where, after_pk=run.after_pk, limit=self._batch
                )
                batch = [_chat_of(row) for row in rows]
                if not batch:
                    return
                if self._engine.dialect.name == "postgresql":  # several workers at once
                    batch = await _had_pages_now(conn, batch)
                run.after_pk = max(run.after_pk, batch[-1].pk)  # the next batch goes on from here
                window = await planning.window(conn, min(c.cursor for c in batch))
                if run.offers is None or run.offers.window != window:
                    run.offers = Offers(window)
                    run.offers.dates = await _dates(conn, window)
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
        batch: list[PlannedChat],
        offers_for: Offers,
        messages: _Messages,
        welcome: Welcome,
        *,
        now: dt.datetime,
        advance_schedule: bool,
        count_pages: bool,
    ) -> int:
        window = offers_for.window
        ledger, borrowed = await _ledger(conn, batch, window)
        weights = await feedback.weights_in_range(
            conn, first=batch[0].pk, last=batch[-1].pk, wanted=[c.pk for c in batch if c.digests]
        )
        held: dict[dt.datetime, list[int]] = {}  # quiet hours' end -> instant chats held
        released: list[int] = []  # instant chats whose held pages go out now
        stamp = utcnow()  # when rows are written; ``now`` is the clock the schedule runs on
        rows: list[dict[str, object]] = []
        # The ledger's new rows: each chat planned and its group of new pages; chats with
        # the same offers share a group (see ``queueing.record_planned``).
        planned: list[tuple[int, int]] = []
        groups: dict[tuple[Offer, ...], tuple[int, bool]] = {}  # offers -> group, any updates
        group_pages: list[tuple[tuple[int, str], ...]] = []
        changed_ledger: list[dict[str, object]] = []
        rescheduled: dict[dt.datetime, list[int]] = {}  # next digest -> chats
        pages_planned = 0
        for chat in batch:
            offers = offers_for(chat, ledger.get(chat.pk))
            daily = chat.digests
            if offers and not daily and advance_schedule:
                quiet_ends = (
                    schedule.quiet_end(now, quiet=chat.quiet, timezone=chat.timezone)
                    if chat.quiet
                    else None
                )
                if quiet_ends is not None:  # held, cursor and all, until the quiet hours end
                    held.setdefault(schedule.naive_utc(quiet_ends), []).append(chat.pk)
                    continue
            if chat.held_until is not None and not daily:
                released.append(chat.pk)
            welcomed = False
            if (
                welcome.enabled
                and not chat.had_pages
                and not chat.filter.is_empty
                and (daily or not advance_schedule)
            ):
                pages = await welcome.offers(conn, chat.filter, now=now, since=chat.created_at)
                with_welcome = welcome.added(offers, pages)
                if with_welcome is not offers:
                    offers, welcomed = with_welcome, True
                    offers_for.include(welcome)
            if offers:
                if daily or welcomed or chat.held_until is not None:
                    found = weights.get(chat.pk)
                    shown, rest = offers_for.ranked(chat, offers, found)
                    rows.append(
                        messages.digest(
                            chat, shown, stamp=stamp, rest=rest, shared=not found, welcome=welcomed
                        )
                    )
                else:
                    rows.extend(messages.pages(chat, offers, stamp=stamp))
                pages_planned += len(offers)
                pk = chat.pk
                grouped = groups.get(offers)
                if grouped is None:
                    fresh = tuple((page_id, fp) for page_id, updated, fp in offers if not updated)
                    grouped = groups[offers] = (len(group_pages), len(fresh) != len(offers))
                    group_pages.append(fresh)
                group, any_updates = grouped
                if group_pages[group]:
                    planned.append((pk, group))
                if any_updates:
                    # A page the chat had only as another copy of its paper gets a
                    # ledger row of its own; one it had gets its row's new version.
                    copy_only = borrowed.get(pk, ())
                    changed_ledger += [
                        {"c": pk, "p": page_id, "f": fp, "t": stamp}
                        for page_id, updated, fp in offers
                        if updated and page_id not in copy_only
                    ]
                    own = tuple(
                        (page_id, fp)
                        for page_id, updated, fp in offers
                        if updated and page_id in copy_only
                    )
                    if own:
                        planned.append((pk, len(group_pages)))
                        group_pages.append(own)
            if (
                advance_schedule
                and daily
                and (chat.next_digest_at is None or chat.next_digest_at <= now)
                and (next_due := messages.next_due(chat)) is not None
            ):
                rescheduled.setdefault(next_due, []).append(chat.pk)

        await queueing.enqueue(conn, rows)
        await queueing.record_planned(conn, planned, group_pages, at=stamp)
        if changed_ledger:
            await planning.update_ledger(conn, changed_ledger)
        # Every chat of the batch but those held has now seen the window: its cursor moves
        # to the window's end (never back), in one statement per chunk rather than one row
        # at a time; a chat whose next digest is due again gets both in one statement.
        held_pks = {pk for pks in held.values() for pk in pks}
        cursor = window.last_id or None
        for due, due_pks in rescheduled.items():  # daily chats; those held are instant ones
            await planning.advance_chats(conn, due_pks, cursor=cursor, next_digest_at=due)
        scheduled = {pk for pks in rescheduled.values() for pk in pks}
        await planning.advance_chats(
            conn,
            [c.pk for c in batch if c.pk not in held_pks and c.pk not in scheduled],
            cursor=cursor,
        )
        for until, until_pks in [*held.items(), (None, released)]:
            await planning.set_held_until(conn, until_pks, until=until)
        if rows:
            log.info(
                "planned %s for %s",
                tn("en", "log.messages", len(rows)),
                tn("en", "log.chats", len(batch)),
            )
        return pages_planned if count_pages else len(rows)


def _digest_payload(
    offers: tuple[Offer, ...], rest: tuple[Offer, ...], day: dt.date, *, welcome: bool
) -> str:
    """A digest's outbox payload, as JSON (:class:`bot.payloads.Digest`): the pages in the
    order shown, the day, ranked, the ``rest`` the limit left out, and ``welcome`` for a
    chat's first digest."""
    return payloads.encode_digest(
        [(p, u) for p, u, _ in offers],
        rest=[p for p, _, _ in rest],
        day=day,
        ranked=True,
        welcome=welcome,
    )


def _chat_of(row: Sequence[Any]) -> PlannedChat:
    """A :class:`PlannedChat` of a row of ``_CHAT_COLUMNS`` and ``had_pages``."""
    pk, platform, mode, at, tz, text, cursor, next_at, weekday, quiet, limit, held, made, had = row
    return PlannedChat(
        pk,
        platform,
        mode,
        at,
        tz,
        chat_store.filter_of(text),
        cursor,
        next_at,
        weekday,
        chat_store.quiet_of(quiet),
        limit,
        held,
        bool(had),
        made,
    )


async def _had_pages_now(conn: AsyncConnection, batch: list[PlannedChat]) -> list[PlannedChat]:
    """``batch`` with ``had_pages`` read again, now that its rows are locked.

    A row another worker planned and committed while the batch's query ran is locked with
    its new cursor, but ``had_pages`` comes from the query's snapshot, from before: that
    chat was welcomed a second time, and the ledger refused the pages it already had (seen
    planning a million chats, where one batch's query takes long enough).
    """
    had = await planning.chats_with_pages(conn, [c.pk for c in batch if not c.had_pages])
    return [c._replace(had_pages=True) if c.pk in had else c for c in batch] if had else batch


async def _dates(conn: AsyncConnection, window: _Window) -> dict[int, int]:
    """The ordinal of each window page's date (``updated``, else ``created``): the
    ranking's tie-break, as in the digest."""
    return await planning.dates(
        conn, sorted(window.tags.keys() | {e.page_id for e in window.events})
    )


async def _ledger(
    conn: AsyncConnection, batch: Sequence[PlannedChat], window: _Window
) -> tuple[dict[int, dict[int, str]], dict[int, set[int]]]:
    """The fingerprints the chats of ``batch`` had of the window's pages, by chat, and
    the pages each had only as another copy of their paper (see ``planning.ledger``).

    A batch is a run of primary keys, so the rows are read by range (other chats' rows in
    the range are left out here) instead of by a list of every key.
    """
    page_ids = sorted(window.tags.keys() | {e.page_id for e in window.events})
    return await planning.ledger(
        conn,
        page_ids=page_ids,
        first=batch[0].pk,
        last=batch[-1].pk,
        wanted={c.pk for c in batch},
        copies=window.copies,
    )


class _Messages:
    """Outbox rows for a planning run. Chats with the same offers on the same day get the
    same payload: it is made (and JSON-encoded) once, not once per chat."""

    def __init__(self, now: dt.datetime) -> None:
        self._now = now
        self._days: dict[str, dt.date] = {}  # the date ``now`` is, by time zone
        self._next_dues: dict[
            tuple[str, str, str, int | None, QuietHours | None], dt.datetime | None
        ] = {}
        self._digests: dict[
            tuple[str, tuple[Offer, ...], tuple[Offer, ...], dt.date, bool], dict[str, object]
        ] = {}

    def digest(
        self,
        chat: PlannedChat,
        offers: tuple[Offer, ...],
        *,
        stamp: dt.datetime,
        rest: tuple[Offer, ...] = (),
        shared: bool = True,
        welcome: bool = False,
    ) -> dict[str, object]:
        """A digest of ``offers`` in their order (ranked); ``rest``: left out by the limit;
        ``welcome``: the chat's first, marked "to get you started".

        ``shared``: other chats may well get the same (not so when the order is the chat's
        own, from its votes: then keeping the payload for them would only cost memory).
        """
        day = self._days.get(chat.timezone)
        if day is None:
            day = self._days[chat.timezone] = schedule.local_date(self._now, chat.timezone)
        key = (chat.platform, offers, rest, day, welcome)
        template = self._digests.get(key) if shared else None
        if template is None:
            template = queueing.row_values(
                chat_pk=chat.pk,
                platform=chat.platform,
                kind="digest",
                payload=_digest_payload(offers, rest, day, welcome=welcome),
                now=stamp,
                priority=DIGEST_PRIORITY,
            )
            if shared:
                self._digests[key] = template
        return queueing.row_for(template, chat_pk=chat.pk, now=stamp)

    def pages(
        self, chat: PlannedChat, offers: tuple[Offer, ...], *, stamp: dt.datetime
    ) -> list[dict[str, object]]:
        """Instant mode: one message per page."""
        return [
            queueing.row_values(
                chat_pk=chat.pk,
                platform=chat.platform,
                kind="page",
                payload=payloads.Instant(pages=((page_id, is_update),)),
                now=stamp,
                priority=DIGEST_PRIORITY,
            )
            for page_id, is_update, _fp in offers
        ]

    def next_due(self, chat: PlannedChat) -> dt.datetime | None:
        """When the chat's next digest is due after this one, as naive UTC; None in instant
        mode (:func:`bot.rules.schedule.next_digest`)."""
        weekday = schedule.digest_weekday(chat.mode, chat.weekday)
        key = (chat.mode, chat.digest_time, chat.timezone, weekday, chat.quiet)
        if key not in self._next_dues:
            hour, minute = (int(x) for x in chat.digest_time.split(":"))
            due = schedule.next_digest(
                mode=chat.mode,
                at=dt.time(hour, minute),
                weekday=chat.weekday,
                timezone=chat.timezone,
                now=self._now,
                quiet=chat.quiet,
            )
            self._next_dues[key] = None if due is None else schedule.naive_utc(due)
        return self._next_dues[key]
