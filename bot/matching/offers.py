"""Offers: which pages each chat planned should get, from one window of page events.

A page the chat never had is offered as new; a page it had in an older version is offered
as updated; a chat's first digest adds a welcome of recent matching pages. The planner
(:mod:`bot.matching.planner`) writes what is offered; the work here is shared between the
many chats of a planning run that have the same cursor or filter.
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from sqlalchemy.ext.asyncio import AsyncConnection

from bot.models import Filter, Mode, QuietHours
from bot.rules import filters, ranking
from bot.store import planning
from bot.store.planning import Event
from bot.store.planning import Window as _Window

_INSTANT = Mode.INSTANT.value  # read for every chat planned: an enum member's value is slow

# The welcome digest (a chat's first): matching pages of the last ``welcome_days`` days, at
# most WELCOME_MAX of them, and at least WELCOME_MIN whatever their age: when fewer are that
# recent, the newest older matching pages make up the difference.
WELCOME_MAX = 10
WELCOME_MIN = 5
# Pages looked through for a welcome digest, newest first: a filter that matches none of
# the newest 500 pages gets no welcome, which keeps planning a thousand new chats cheap.
WELCOME_POOL = 500
# Results kept for sharing between chats, at most: chats with offers of their own (from
# their ledger) would otherwise fill the cache with tuples no other chat shares.
_SHARED_MAX = 100_000


class PlannedChat(NamedTuple):
    """What planning reads of a chat: a few columns, not a whole :class:`ChatRecord`."""

    pk: int
    platform: str
    mode: str
    digest_time: str  # HH:MM, local
    timezone: str
    filter: Filter
    cursor: int
    next_digest_at: dt.datetime | None
    weekday: int = 0
    quiet: QuietHours | None = None
    limit: int | None = None
    held_until: dt.datetime | None = None  # instant pages held by quiet hours until then
    had_pages: bool = True  # whether any page was ever planned for it (False: welcome it)
    created_at: dt.datetime | None = None  # when it subscribed: its welcome is older pages

    @property
    def digests(self) -> bool:
        """Whether the chat gets digests on a schedule (daily or weekly), not instant pages."""
        return self.mode != _INSTANT


class Offer(NamedTuple):
    """A page offered to a chat: new to it, or an update of a version it had."""

    page_id: int
    is_update: bool
    fingerprint: str


class Welcome:
    """The pages of welcome digests, for a planning run: the newest pages are read once
    (on the first chat that needs them) and matched once per filter."""

    def __init__(self, days: int, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self._days = days
        self._pool: list[tuple[int, str, dt.date, dt.datetime, frozenset[str]]] | None = None
        self._seen: list[dt.datetime] = []  # when the pool's pages were first seen, sorted
        # The pool's tags and dates, by page: a welcome page is ranked as a digest ranks
        # any page (more matched tags first, then newest), and it may not be in the window.
        self.tags: dict[int, tuple[str, ...]] = {}
        self.dates: dict[int, int] = {}
        self._by_filter: dict[tuple[Filter, int], tuple[Offer, ...]] = {}
        # (id(offers), id(welcome pages)) -> both, and the offers with those pages added
        self._added: dict[
            tuple[int, int], tuple[tuple[Offer, ...], tuple[Offer, ...], tuple[Offer, ...]]
        ] = {}

    def added(self, offers: tuple[Offer, ...], pages: tuple[Offer, ...]) -> tuple[Offer, ...]:
        """``offers`` and, after them, the welcome ``pages`` not among them; ``offers``
        itself when none is left to add. Chats that share both tuples share the result, as
        they share their offers (see ``Offers.ranked``)."""
        key = (id(offers), id(pages))
        found = self._added.get(key)
        if found is not None and found[0] is offers and found[1] is pages:
            return found[2]
        offered = {page_id for page_id, _, _ in offers}
        extra = tuple(o for o in pages if o[0] not in offered)
        result = offers + extra if extra else offers
        if len(self._added) < _SHARED_MAX:
            self._added[key] = (offers, pages, result)
        return result

    async def offers(
        self, conn: AsyncConnection, f: Filter, *, now: dt.datetime, since: dt.datetime | None
    ) -> tuple[Offer, ...]:
        """The welcome pages for a chat with filter ``f`` that subscribed at ``since``,
        newest first: pages the wiki had by then. One published later came to it as news,
        or was missed while it could not be reached; a welcome never replays those."""
        if self._pool is None:
            rows = await planning.newest_pages(conn, limit=WELCOME_POOL)
            self._pool = [
                (page_id, fp, day, seen, filters.normalized_tags(tags))
                for page_id, fp, day, seen, tags in rows
            ]
            self.tags = {page_id: tuple(tags) for page_id, _, _, _, tags in rows}
            self.dates = {page_id: day.toordinal() for page_id, _, day, _, _ in rows}
            self._seen = sorted(seen for _, _, _, seen, _ in self._pool)
        # Chats that subscribed between the same two first sightings get the same pages.
        known = len(self._seen) if since is None else bisect.bisect_right(self._seen, since)
        found = self._by_filter.get((f, known))
        if found is not None:
            return found
        cutoff = now.date() - dt.timedelta(days=self._days)
        before = self._seen[known - 1] if known else None
        matching = [
            (page_id, fp, day)
            for page_id, fp, day, seen, tags in self._pool
            if before is not None and seen <= before and filters.matches_normalized(f, tags)
        ]
        recent = [(page_id, fp) for page_id, fp, day in matching if day >= cutoff][:WELCOME_MAX]
        if len(recent) < WELCOME_MIN:  # topped up with the newest older ones
            older = [(page_id, fp) for page_id, fp, day in matching if day < cutoff]
            recent += older[: WELCOME_MIN - len(recent)]
        found = self._by_filter[(f, known)] = tuple(
            Offer(page_id, False, fp) for page_id, fp in recent
        )
        return found


class Offers:
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
        self.dates: dict[int, int] = {}  # page -> ordinal of its date (0: undated)
        # (filter, offers) -> the offers in the usual digest order, and where each tag is
        self._usual: dict[
            tuple[Filter, tuple[Offer, ...]], tuple[list[Offer], dict[str, list[int]]]
        ] = {}
        self._usual_of: dict[
            int, tuple[tuple[Offer, ...], Filter, tuple[list[Offer], dict[str, list[int]]]]
        ] = {}
        # Tags and dates of pages offered from outside the window (welcome pages).
        self._more_tags: Mapping[int, Sequence[str]] = {}
        self._more_dates: Mapping[int, int] = {}

    def include(self, welcome: Welcome) -> None:
        """Rank the welcome's pages as the window's: by their tags and dates."""
        self._more_tags, self._more_dates = welcome.tags, welcome.dates

    def ranked(
        self, chat: PlannedChat, offers: tuple[Offer, ...], found: Mapping[str, int] | None
    ) -> tuple[tuple[Offer, ...], tuple[Offer, ...]]:
        """``(shown, left out)``: ``offers`` best ranked first (``bot.rules.ranking``) and cut at
        the chat's limit. The usual order, the ranking's tie-break, is the digest's own:
        more matched tags first, then newest."""
        # Chats with the same cursor and filter that never had these pages share one
        # ``offers`` tuple (see ``__call__``): found by identity, without hashing it.
        shared = self._usual_of.get(id(offers))
        if shared is not None and shared[0] is offers and shared[1] is chat.filter:
            usual = shared[2]
        else:
            usual = self._usual_for(chat.filter, offers)
        in_order, positions_of = usual
        if not found:
            ranked = in_order
        else:
            positions = ranking.order_indexed(positions_of, len(in_order), found)
            ranked = [in_order[i] for i in positions]
        cut = len(ranked) if chat.limit is None else chat.limit
        return tuple(ranked[:cut]), tuple(ranked[cut:])

    def _usual_for(
        self, f: Filter, offers: tuple[Offer, ...]
    ) -> tuple[list[Offer], dict[str, list[int]]]:
        """``offers`` in the usual digest order, and where each of their tags is."""
        key = (f, offers)
        usual = self._usual.get(key)
        if usual is None:
            tags, dates = self.window.tags, self.dates
            more_tags, more_dates = self._more_tags, self._more_dates

            def tags_of(page_id: int) -> Sequence[str]:
                return tags.get(page_id) or more_tags.get(page_id, ())

            in_order = sorted(
                offers,
                key=lambda o: (
                    -len(filters.matched_tags(f, tags_of(o[0]))),
                    -(dates.get(o[0]) or more_dates.get(o[0], 0)),
                    o[0],
                ),
            )
            usual = self._usual[key] = (
                in_order,
                ranking.index([tags_of(o[0]) for o in in_order]),
            )
            self._usual_of[id(offers)] = (offers, f, usual)
        return usual

    def __call__(self, chat: PlannedChat, ledger: dict[int, str] | None) -> tuple[Offer, ...]:
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
            fresh = tuple(Offer(e.page_id, False, e.fingerprint) for e, new in candidates if new)
            found = self._matching[key] = (candidates, fresh)
        candidates, fresh = found
        if not ledger:
            return fresh
        offers = []
        for event, new in candidates:
            had = ledger.get(event.page_id)
            if had is None:
                if new:
                    offers.append(Offer(event.page_id, False, event.fingerprint))
            elif had != event.fingerprint:
                offers.append(Offer(event.page_id, True, event.fingerprint))
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
