"""What planning reads and writes: page events and their tags, the chats due, the ledger
(``chat_pages``) and the chats' cursors and schedules (see :mod:`bot.matching.planner`).

Every function runs in the caller's transaction, so the outbox rows, the ledger and the
cursors of a batch are written together.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    ColumnElement,
    bindparam,
    case,
    func,
    insert,
    literal_column,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.models import ChangeKind, ChatState, Mode
from bot.rules import filters
from bot.store import chats as chat_store
from bot.store import current
from bot.store import pages as page_store
from bot.store.engine import among, id_parts, reader
from bot.store.schema import chat_pages, chats, page_events, page_tags, pages
from bot.util import chunks


@dataclass(frozen=True, slots=True)
class Event:
    id: int
    page_id: int
    new: bool
    fingerprint: str


@dataclass(slots=True)
class Window:
    """The events after some cursor, with the tags of their pages.

    Each event is on its paper's current page (see :func:`bot.store.current.papers_of`):
    an event of another copy of the paper (a feed entry of the wiki's paper) counts as one
    of that page, with that page's fingerprint; one of a paper no configured source carries
    is left out. ``copies`` names, by page, the other pages of its paper: a chat that had
    one of them had the paper.
    """

    events: list[Event]
    tags: dict[int, tuple[str, ...]]
    copies: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @property
    def last_id(self) -> int:
        return self.events[-1].id if self.events else 0


@dataclass(frozen=True, slots=True)
class Due:
    """Chats to plan on schedule: instant chats with events after their cursor, and chats
    whose next digest is due at ``now``."""

    now: dt.datetime
    latest_event: int


@dataclass(frozen=True, slots=True)
class Only:
    """Chats to plan now, whatever their schedule: these, or every one when ``pks`` is None."""

    pks: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class One:
    """One chat to plan now (the ``digest`` command)."""

    pk: int


Selection = Due | Only | One

# The columns of a chat that planning reads, in the order of a row of :func:`lock_batch`
# (then ``had_pages``): a few columns, not a whole ``ChatRecord``.
_CHAT_COLUMNS = (
    chats.c.id,
    chats.c.platform,
    chats.c.mode,
    chats.c.digest_time,
    chats.c.timezone,
    chats.c.filter,
    chats.c.cursor,
    chats.c.next_digest_at,
    chats.c.weekday,
    chats.c.quiet,
    chats.c.digest_limit,
    chats.c.held_until,
    chats.c.created_at,
)


async def latest_event_id(engine: AsyncEngine) -> int:
    """The id of the newest page event, 0 when there is none (a read-only transaction)."""
    async with reader(engine).connect() as conn:
        return await chat_store.latest_event_id(conn)


def _where(selection: Selection) -> ColumnElement[bool] | None:
    if isinstance(selection, Due):
        return (
            (chats.c.mode == Mode.INSTANT.value) & (chats.c.cursor < selection.latest_event)
        ) | (chats.c.next_digest_at <= selection.now)
    if isinstance(selection, One):
        return chats.c.id == selection.pk
    return None if selection.pks is None else chats.c.id.in_(list(selection.pks))


async def lock_batch(
    conn: AsyncConnection, *, selection: Selection, after_pk: int, limit: int
) -> list[Sequence[Any]]:
    """The next ``limit`` active chats of ``selection`` after primary key ``after_pk``, in
    key order: rows of the planning columns and ``had_pages`` (whether any page was ever
    planned for the chat).

    On PostgreSQL the rows are locked, and chats locked by another transaction skipped.
    """
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
        .where(state == ChatState.ACTIVE.value, chats.c.id > after_pk)
        .order_by(chats.c.id)
        .limit(limit)
    )
    where = _where(selection)
    if where is not None:
        query = query.where(where)
    if postgres:
        # Other workers and replicas skip the chats locked here. Only the cursor
        # and schedule change: the lock leaves rows that refer to a chat free,
        # and holds off deleting the chat until its ledger rows are committed
        # (the delete's trigger then removes them).
        query = query.with_for_update(skip_locked=True, key_share=True)
    return list(await conn.execute(query))


async def queue_backfill(conn: AsyncConnection, *, since: dt.date, now: dt.datetime) -> int:
    """Queue a page event for every current page (one a paper, see :mod:`bot.store.current`)
    dated on or after ``since`` that some active chat would receive from it and from
    nothing else; return how many papers chats will receive through them, a chat and a
    paper counting once.

    A chat receives a backfilled page when its filter matches the page and it never had
    that version (the ledger; a version of another page of the paper counts as its), unless
    an event already on its way to it (after its cursor) brings the paper anyway. So a
    paper the chats already had, or that no chat follows, queues nothing, the count is what
    the chats' next digests carry, and a second backfill queues nothing again.
    """
    date = func.coalesce(pages.c.updated, pages.c.created)
    candidates = {
        page_id: fingerprint
        for page_id, fingerprint in await conn.execute(
            select(pages.c.id, pages.c.fingerprint).where(
                pages.c.id.in_(current.current_ids()),  # one page a paper, as every reader
                # Pages without a date count as recent: a backfill should not hide them.
                (date >= since) | date.is_(None),
            )
        )
    }
    if not candidates:
        return 0
    tags = {
        page_id: filters.normalized_tags(found)
        for page_id, found in (await page_store.tags_of(conn, list(candidates))).items()
    }
    active = list(
        await conn.execute(
            select(chats.c.id, chats.c.filter, chats.c.cursor).where(
                chats.c.state == ChatState.ACTIVE.value
            )
        )
    )
    if not active:
        return 0
    # A chat had the paper when it had any page of it; an event of any page of it brings it.
    copies = (await current.papers_of(conn, list(candidates))).copies
    paper_of = {other: page_id for page_id, others in copies.items() for other in others}
    paper_of.update({page_id: page_id for page_id in candidates})
    # The events of the candidate papers that a chat may not have planned yet.
    pending: dict[int, list[tuple[int, bool]]] = {}  # page -> (event id, new)
    oldest = min(cursor for _, _, cursor in active)
    for part in chunks(list(paper_of)):
        for event_id, page_id, kind in await conn.execute(
            select(page_events.c.id, page_events.c.page_id, page_events.c.kind).where(
                page_events.c.page_id.in_(part), page_events.c.id > oldest
            )
        ):
            pending.setdefault(paper_of[page_id], []).append((event_id, kind == "new"))
    had: dict[tuple[int, int], str] = {}
    had_copy: dict[tuple[int, int], str] = {}  # the version of another page of the paper
    for part in chunks(list(paper_of)):
        for chat_pk, page_id, fingerprint in await conn.execute(
            select(chat_pages.c.chat_pk, chat_pages.c.page_id, chat_pages.c.fingerprint).where(
                chat_pages.c.page_id.in_(part)
            )
        ):
            found = had if page_id in candidates else had_copy
            found[(chat_pk, paper_of[page_id])] = fingerprint
    had = {**had_copy, **had}
    untagged = frozenset[str]()
    matching: dict[str, list[int]] = {}  # filter text -> the candidates it matches
    reach: dict[int, int] = {}  # page -> chats that receive it only through a new event
    for chat_pk, filter_text, cursor in active:
        matched = matching.get(filter_text)
        if matched is None:
            f = chat_store.filter_of(filter_text)
            matched = matching[filter_text] = [
                page_id
                for page_id in candidates
                if not f.is_empty and filters.matches_normalized(f, tags.get(page_id, untagged))
            ]
        for page_id in matched:
            version = had.get((chat_pk, page_id))
            if version == candidates[page_id]:
                continue  # it had this version
            later = [new for event_id, new in pending.get(page_id, ()) if event_id > cursor]
            # As planning offers it: a page it never had comes with a "new" event after
            # its cursor, one it had in another version with any event after it.
            if any(later) if version is None else later:
                continue
            reach[page_id] = reach.get(page_id, 0) + 1
    events = [
        {
            "page_id": page_id,
            "kind": ChangeKind.NEW.value,
            "fingerprint": candidates[page_id],
            "created_at": now,
        }
        for page_id in sorted(reach)
    ]
    for event_part in chunks(events):
        await conn.execute(insert(page_events), list(event_part))
    return sum(reach.values())


async def window(conn: AsyncConnection, after: int) -> Window:
    """The page events after event ``after``, in order, with their pages' tags."""
    rows = await conn.execute(
        select(
            page_events.c.id, page_events.c.page_id, page_events.c.kind, page_events.c.fingerprint
        )
        .where(page_events.c.id > after)
        .order_by(page_events.c.id)
    )
    events = [Event(id=i, page_id=p, new=k == "new", fingerprint=f) for i, p, k, f in rows]
    papers = await current.papers_of(conn, sorted({e.page_id for e in events}))
    events = [
        e
        if papers.page_of.get(e.page_id, e.page_id) == e.page_id
        else Event(
            id=e.id,
            page_id=papers.page_of[e.page_id],
            new=e.new,
            fingerprint=papers.fingerprints[papers.page_of[e.page_id]],
        )
        for e in events
        if e.page_id not in papers.unconfigured  # of a source taken out: not delivered
    ]
    tags = await page_store.tags_of(conn, sorted({e.page_id for e in events}))
    return Window(events=events, tags=tags, copies=papers.copies)


async def newest_pages(
    conn: AsyncConnection, *, limit: int
) -> list[tuple[int, str, dt.date, dt.datetime, list[str]]]:
    """The newest current pages, one a paper (by wiki date, else when first seen): id,
    fingerprint, date, when first seen and tags."""
    date = func.coalesce(pages.c.updated, pages.c.created)
    newest = await current.newest_page_ids(conn, limit=limit)
    found = {
        row[0]: row
        for row in await conn.execute(
            select(pages.c.id, pages.c.fingerprint, date, pages.c.first_seen_at).where(
                pages.c.id.in_(newest)
            )
        )
    }
    rows = [found[page_id] for page_id in newest if page_id in found]
    tags: dict[int, list[str]] = {}
    for part in chunks([row[0] for row in rows]):
        for page_id, tag in await conn.execute(
            select(page_tags.c.page_id, page_tags.c.tag).where(page_tags.c.page_id.in_(part))
        ):
            tags.setdefault(page_id, []).append(tag)
    return [
        (page_id, fp, day or seen.date(), seen, tags.get(page_id, []))
        for page_id, fp, day, seen in rows
    ]


async def dates(conn: AsyncConnection, page_ids: Sequence[int]) -> dict[int, int]:
    """The ordinal of each page's date (``updated``, else ``created``; 0: undated)."""
    found: dict[int, int] = {}
    for part in chunks(page_ids):
        rows = await conn.execute(
            select(pages.c.id, pages.c.updated, pages.c.created).where(pages.c.id.in_(part))
        )
        for page_id, updated, created in rows:
            date = updated or created
            found[page_id] = date.toordinal() if date else 0
    return found


async def ledger(
    conn: AsyncConnection,
    *,
    page_ids: Sequence[int],
    first: int,
    last: int,
    wanted: set[int],
    copies: Mapping[int, Sequence[int]] | None = None,
) -> tuple[dict[int, dict[int, str]], dict[int, set[int]]]:
    """The fingerprints the chats ``wanted`` (keys from ``first`` to ``last``) had of
    ``page_ids``, by chat; and, by chat, the pages it had only as another copy.

    A chat that had another copy of a page's paper (``copies``: page -> the others) had
    the page, in a version of its own: it is offered as updated, never as new again.

    The rows are read by key range (other chats' rows in the range are left out here)
    instead of by a list of every key.
    """
    copies = copies or {}
    copy_of = {other: page_id for page_id, others in copies.items() for other in others}
    found: dict[int, dict[int, str]] = {}
    for page_part in chunks(sorted(set(page_ids) | copy_of.keys())):
        rows = await conn.execute(
            select(chat_pages.c.chat_pk, chat_pages.c.page_id, chat_pages.c.fingerprint).where(
                chat_pages.c.chat_pk.between(first, last), chat_pages.c.page_id.in_(page_part)
            )
        )
        for chat_pk, page_id, fingerprint in rows:
            if chat_pk in wanted:
                found.setdefault(chat_pk, {})[page_id] = fingerprint
    borrowed: dict[int, set[int]] = {}
    if copy_of:
        for chat_pk, had in found.items():
            for other in [page_id for page_id in had if page_id in copy_of]:
                page_id = copy_of[other]
                if page_id not in had:
                    had[page_id] = had[other]
                    borrowed.setdefault(chat_pk, set()).add(page_id)
    return found, borrowed


async def update_ledger(conn: AsyncConnection, changed: Sequence[Mapping[str, object]]) -> None:
    """New fingerprints of pages chats had: ``{"c": chat_pk, "p": page_id, "f": fingerprint,
    "t": planned_at}`` each, in one executemany."""
    await conn.execute(
        update(chat_pages)
        .where(chat_pages.c.chat_pk == bindparam("c"), chat_pages.c.page_id == bindparam("p"))
        .values(fingerprint=bindparam("f"), planned_at=bindparam("t")),
        list(changed),
    )


async def advance_chats(
    conn: AsyncConnection,
    pks: Sequence[int],
    *,
    cursor: int | None,
    next_digest_at: dt.datetime | None = None,
) -> None:
    """Move the chats' cursors to event ``cursor`` (never back) and, when given, set when
    their next digest is due: one statement per chunk, so each chat's row gets one new
    version (on PostgreSQL a row and an entry in each of the table's indexes), not one for
    the cursor and another for the schedule."""
    if cursor is None and next_digest_at is None:
        return
    for pk_part in id_parts(conn, pks):
        where = among(conn, chats.c.id, pk_part)
        if next_digest_at is None:  # rows whose cursor is already there are left alone
            statement = update(chats).where(where, chats.c.cursor < cursor).values(cursor=cursor)
        elif cursor is None:
            statement = update(chats).where(where).values(next_digest_at=next_digest_at)
        else:
            statement = (
                update(chats)
                .where(where)
                .values(
                    cursor=case((chats.c.cursor < cursor, cursor), else_=chats.c.cursor),
                    next_digest_at=next_digest_at,
                )
            )
        await conn.execute(statement)


async def set_held_until(
    conn: AsyncConnection, pks: Iterable[int], *, until: dt.datetime | None
) -> None:
    """Hold the instant chats' pages until ``until`` (quiet hours' end); None releases."""
    for pk_part in id_parts(conn, list(pks)):
        await conn.execute(
            update(chats).where(among(conn, chats.c.id, pk_part)).values(held_until=until)
        )


async def chats_with_pages(conn: AsyncConnection, chat_pks: Sequence[int]) -> set[int]:
    """Which of ``chat_pks`` had any page planned (read in the caller's transaction)."""
    had: set[int] = set()
    for part in id_parts(conn, list(chat_pks)):
        rows = await conn.execute(
            select(chat_pages.c.chat_pk).where(among(conn, chat_pages.c.chat_pk, part)).distinct()
        )
        had.update(rows.scalars())
    return had
