"""The current papers: one page per paper, of the configured sources. Every reader of the
wiki goes through here, so a paper is one paper on every surface.

A paper (``pages.paper``, see :mod:`bot.papers`) may come through several sources: the
sample wiki and one's own, a directory and its git mirror, a wiki page and a feed entry that
links to arXiv. Of the pages of one paper, its *current page* is the first in this order
(:func:`_order`):

1. a page of a configured source (``sources.active``: in ``WIKI_SOURCES`` at the last start
   or poll) before one of a source taken out;
2. a present page before a removed one;
3. a wiki page (a directory or git source) before a feed entry;
4. the first seen (the lowest id).

The wiki shows a paper when its current page is of a configured source and present:
``latest``, ``tags`` and their counts, the private feed, ``stats``, backfills and welcome
digests read :func:`current_ids`. Planning delivers each event as its paper's current page
and drops the events of a paper no configured source carries (:func:`papers_of`); ``why``
answers for that page. What a chat had of any page of a paper stays in the ledger, so a
source taken out and put back sends nothing again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import (
    ColumnElement,
    FromClause,
    Select,
    case,
    func,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.store.schema import page_events, page_tags, pages, sources
from bot.util import chunks

_Row = TypeVar("_Row", bound=tuple[Any, ...])


def _order(page: FromClause, source: FromClause) -> tuple[ColumnElement[int], ...]:
    """The order of a paper's pages, first the current one (see the module's docstring)."""
    return (
        case((source.c.active, 0), else_=1),
        case((page.c.removed_at.is_(None), 0), else_=1),
        case((source.c.kind == "feed", 1), else_=0),
        page.c.id,
    )


def current_ids(*, among: Select[tuple[str]] | None = None) -> Select[tuple[int]]:
    """The ids of the current pages: one per paper the wiki shows; ``among``: of the
    papers it selects only (built on an alias of ``pages``), so that a few papers' pages
    are ranked, not every page.

    Each page is ranked among its paper's by :func:`_order` (a window, one pass over the
    pages: an anti-join per page took PostgreSQL six times as long at 30,000 pages). Every
    page has a paper (``record_pages`` gives it; revision 0003 filled the older ones).
    """
    place = (
        func.row_number()
        .over(partition_by=pages.c.paper, order_by=_order(pages, sources))
        .label("place")
    )
    ranked = select(pages.c.id, pages.c.removed_at, sources.c.active, place).select_from(
        pages.join(sources, sources.c.id == pages.c.source_id)
    )
    if among is not None:
        ranked = ranked.where(pages.c.paper.in_(among))
    table = ranked.subquery("ranked")
    shown = (table.c.place == 1, table.c.active, table.c.removed_at.is_(None))
    return select(table.c.id).where(*shown)


def newest_first(query: Select[_Row], page: FromClause = pages) -> Select[_Row]:
    """``query`` over ``page`` in the order of ``latest``: wiki date, then first seen."""
    date = func.coalesce(page.c.updated, page.c.created)
    return query.order_by(date.desc().nulls_last(), page.c.first_seen_at.desc(), page.c.id.desc())


# Pages ``newest_page_ids`` ranks at first, per page wanted; past MAX_WINDOW it ranks all.
WINDOW_FACTOR = 2
MAX_WINDOW = 4000


async def newest_page_ids(conn: AsyncConnection, *, limit: int, offset: int = 0) -> list[int]:
    """Current pages, newest first (by wiki date, then first seen), ``limit`` of them from
    the ``offset``-th.

    Only a page that can be shown (present, of a configured source) can be a current page,
    so the current pages among the newest such pages are the first current pages: the
    papers of the newest few are ranked (:func:`current_ids` ``among``), more each round
    while too few of them are current, rather than every page of the wiki each time.
    """
    wanted = offset + limit
    window = max(wanted * WINDOW_FACTOR, 50)
    candidate, source = pages.alias("candidate"), sources.alias("candidate_source")
    while window <= MAX_WINDOW:
        showable = (
            select(candidate.c.id)
            .select_from(candidate.join(source, source.c.id == candidate.c.source_id))
            .where(candidate.c.removed_at.is_(None), source.c.active)
        )
        newest = [i for (i,) in await conn.execute(newest_first(showable, candidate).limit(window))]
        if not newest:
            return []
        among = select(candidate.c.paper).where(candidate.c.id.in_(newest))
        shown = set((await conn.execute(current_ids(among=among))).scalars())
        found = [page_id for page_id in newest if page_id in shown]
        if len(found) >= wanted or len(newest) < window:
            return found[offset:wanted]
        window *= 4
    query = newest_first(select(pages.c.id).where(pages.c.id.in_(current_ids())))
    rows = await conn.execute(query.offset(offset).limit(limit))
    return [page_id for (page_id,) in rows]


async def tag_counts(conn: AsyncConnection) -> list[tuple[str, int]]:
    """Every tag of a current page with its papers, most used first."""
    count = func.count(page_tags.c.page_id)
    rows = await conn.execute(
        select(page_tags.c.tag, count)
        .where(page_tags.c.page_id.in_(current_ids()))
        .group_by(page_tags.c.tag)
        .order_by(count.desc(), page_tags.c.tag)
    )
    return [(tag, n) for tag, n in rows]


# Pages carrying a tag that ``known_tags`` looks at first: one of them is nearly always the
# current page of its paper, and a tag every page carries costs no more than a rare one.
KNOWN_SAMPLE = 20


async def known_tags(conn: AsyncConnection, tags: Iterable[str]) -> set[str]:
    """Which of ``tags`` some current page carries (the ``tag_counts`` tags, asked of a few)."""
    found: set[str] = set()
    for tag in sorted(set(tags)):
        # Only a page that can be shown (present, of a configured source) can be current.
        sample = list(
            await conn.scalars(
                select(pages.c.id)
                .join(page_tags, page_tags.c.page_id == pages.c.id)
                .join(sources, sources.c.id == pages.c.source_id)
                .where(page_tags.c.tag == tag, pages.c.removed_at.is_(None), sources.c.active)
                .limit(KNOWN_SAMPLE)
            )
        )
        tagged = pages.alias("tagged")
        if sample and await _any_current(
            conn, sample, among=select(tagged.c.paper).where(tagged.c.id.in_(sample))
        ):
            found.add(tag)
        elif len(sample) == KNOWN_SAMPLE:  # every one looked at is another page's copy
            tag_rows = page_tags.alias("tag_rows")
            carrying = select(tag_rows.c.page_id).where(tag_rows.c.tag == tag)
            among = select(tagged.c.paper).where(tagged.c.id.in_(carrying))
            if await _any_current(
                conn, select(page_tags.c.page_id).where(page_tags.c.tag == tag), among=among
            ):
                found.add(tag)
    return found


async def _any_current(
    conn: AsyncConnection,
    page_ids: Sequence[int] | Select[tuple[int]],
    *,
    among: Select[tuple[str]],
) -> bool:
    """Whether one of ``page_ids`` is current, ranked among the papers ``among`` selects."""
    query = select(pages.c.id).where(
        pages.c.id.in_(page_ids), pages.c.id.in_(current_ids(among=among))
    )
    return (await conn.execute(query.limit(1))).first() is not None


async def paper_count(conn: AsyncConnection) -> int:
    """The papers the wiki shows."""
    shown = current_ids().subquery()
    return int((await conn.execute(select(func.count()).select_from(shown))).scalar_one())


async def papers_new_since(
    conn: AsyncConnection, since: dt.datetime, *, baseline: bool = True
) -> int:
    """Papers shown whose pages were all first seen at or after ``since``; without
    ``baseline``, only those a scan found new (a "new" event of one of their pages), not
    those a source's first scan recorded."""
    older = pages.alias("older")
    query = select(func.count()).where(
        pages.c.id.in_(current_ids()),
        ~select(older.c.id)
        .where(older.c.paper == pages.c.paper, older.c.first_seen_at < since)
        .exists(),
    )
    if not baseline:
        fresh = pages.alias("fresh")
        query = query.where(
            select(page_events.c.id)
            .select_from(page_events.join(fresh, fresh.c.id == page_events.c.page_id))
            .where(fresh.c.paper == pages.c.paper, page_events.c.kind == "new")
            .exists()
        )
    return int((await conn.execute(query)).scalar_one())


@dataclass(frozen=True, slots=True)
class Papers:
    """The paper of each page asked about, as its current page: the page a chat gets."""

    page_of: dict[int, int]  # page -> its paper's current page (pages with copies only)
    fingerprints: dict[int, str]  # that page -> its fingerprint now
    copies: dict[int, tuple[int, ...]]  # that page -> the other pages of its paper
    # Pages asked about whose paper no configured source carries: nothing to deliver.
    unconfigured: frozenset[int] = frozenset()
    # Of the pages above (current or copy), those of sources no longer configured.
    taken_out: frozenset[int] = frozenset()


async def papers_of(conn: AsyncConnection, page_ids: Sequence[int]) -> Papers:
    """Which page each of ``page_ids`` is delivered as: its paper's current page (the
    order of :func:`_order`). A page without a copy maps to itself and is left out of
    ``page_of``; one whose paper is of no configured source is in ``unconfigured``.
    """
    asked = set(page_ids)
    wanted: set[str] = set()
    for part in chunks(sorted(asked)):
        rows = await conn.execute(
            select(pages.c.paper).where(pages.c.id.in_(part), pages.c.paper.is_not(None))
        )
        wanted.update(paper for (paper,) in rows)
    members: dict[str, list[tuple[int, str, bool]]] = {}
    for paper_part in chunks(sorted(wanted)):
        rows = await conn.execute(
            select(pages.c.paper, pages.c.id, pages.c.fingerprint, sources.c.active)
            .select_from(pages.join(sources, sources.c.id == pages.c.source_id))
            .where(pages.c.paper.in_(paper_part))
            .order_by(pages.c.paper, *_order(pages, sources))
        )
        for paper, page_id, fingerprint, active in rows:
            members.setdefault(paper, []).append((page_id, fingerprint, bool(active)))
    page_of: dict[int, int] = {}
    fingerprints: dict[int, str] = {}
    copies: dict[int, tuple[int, ...]] = {}
    unconfigured: set[int] = set()
    taken_out: set[int] = set()
    for found in members.values():
        chosen, fingerprint, active = found[0]
        taken_out.update(page_id for page_id, _, on in found if not on)
        if not active:  # the first is of a configured source, if any is
            unconfigured.update(page_id for page_id, _, _ in found if page_id in asked)
        if len(found) < 2:
            continue
        fingerprints[chosen] = fingerprint
        copies[chosen] = tuple(page_id for page_id, _, _ in found[1:])
        for page_id, _, _ in found:
            page_of[page_id] = chosen
    return Papers(
        page_of=page_of,
        fingerprints=fingerprints,
        copies=copies,
        unconfigured=frozenset(unconfigured),
        taken_out=frozenset(taken_out),
    )


async def configure(conn: AsyncConnection, source_ids: Iterable[int], *, now: dt.datetime) -> None:
    """Record the configured sources: these ids are active, every other source is not;
    a source whose state changes records when (a private feed changed then)."""
    ids = sorted(set(source_ids))
    await conn.execute(
        update(sources)
        .where(sources.c.id.in_(ids), ~sources.c.active)
        .values(active=True, active_changed_at=now)
    )
    await conn.execute(
        update(sources)
        .where(sources.c.id.not_in(ids), sources.c.active)
        .values(active=False, active_changed_at=now)
    )


async def last_change(conn: AsyncConnection) -> dt.datetime:
    """The latest time the pages shown can have changed: a page seen to change or removed,
    a source taken out or put back."""
    page_change = select(func.max(func.coalesce(pages.c.removed_at, pages.c.changed_at)))
    source_change = select(func.max(sources.c.active_changed_at))
    found = [(await conn.execute(q)).scalar_one() for q in (page_change, source_change)]
    return max([when for when in found if when is not None], default=dt.datetime(1970, 1, 1))
