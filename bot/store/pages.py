"""Sources and pages: what a poll records, and what the commands read back."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from bot import papers
from bot.models import ChangeKind, FileStamp, Page, PageText
from bot.store.schema import (
    page_events,
    page_tags,
    page_texts,
    pages,
    source_files,
    sources,
)

# Re-exported for the modules that still read the clock here (delivery.py, slack.py).
from bot.util import chunks as chunks
from bot.util import utcnow as utcnow


@dataclass(frozen=True, slots=True)
class SourceRow:
    id: int
    name: str
    kind: str
    baseline_at: dt.datetime | None
    last_poll_at: dt.datetime | None
    last_ok_at: dt.datetime | None
    last_error: str | None
    etag: str | None
    last_modified: str | None
    active: bool = True  # in WIKI_SOURCES at the last start or poll (``bot.store.current``)


@dataclass(frozen=True, slots=True)
class Recorded:
    """What recording one scan changed."""

    new: int
    updated: int
    queued: int  # page events written (0 on a baseline scan)


async def source(conn: AsyncConnection, *, name: str, kind: str) -> SourceRow:
    """The row of source ``name``, created on first use."""
    row = (await conn.execute(select(sources).where(sources.c.name == name))).mappings().first()
    if row is None:
        await conn.execute(insert(sources).values(name=name, kind=kind))
        row = (await conn.execute(select(sources).where(sources.c.name == name))).mappings().one()
    return SourceRow(**{k: row[k] for k in SourceRow.__slots__})


async def all_sources(conn: AsyncConnection, *, configured: bool = False) -> list[SourceRow]:
    """The sources the store holds; ``configured``: those in ``WIKI_SOURCES`` only."""
    query = select(sources).order_by(sources.c.name)
    if configured:
        query = query.where(sources.c.active)
    rows = (await conn.execute(query)).mappings()
    return [SourceRow(**{k: r[k] for k in SourceRow.__slots__}) for r in rows]


async def stamps(conn: AsyncConnection, source_id: int) -> dict[str, FileStamp]:
    rows = await conn.execute(
        select(
            source_files.c.path,
            source_files.c.mtime_ns,
            source_files.c.size,
            source_files.c.error,
        ).where(source_files.c.source_id == source_id)
    )
    return {path: FileStamp(mtime_ns=m, size=s, error=e) for path, m, s, e in rows}


async def save_stamps(
    conn: AsyncConnection,
    *,
    source_id: int,
    old: Mapping[str, FileStamp],
    new: Mapping[str, FileStamp],
) -> None:
    """Write the difference between two stamp maps."""
    gone = [path for path in old if path not in new]
    changed = [
        {
            "source_id": source_id,
            "path": p,
            "mtime_ns": s.mtime_ns,
            "size": s.size,
            "error": s.error,
        }
        for p, s in new.items()
        if old.get(p) != s
    ]
    for part in chunks(gone + [c["path"] for c in changed if c["path"] in old]):
        await conn.execute(
            delete(source_files).where(
                source_files.c.source_id == source_id, source_files.c.path.in_(part)
            )
        )
    for rows in chunks(changed):
        await conn.execute(insert(source_files), list(rows))


async def record_pages(
    conn: AsyncConnection,
    *,
    source: SourceRow,
    found: Sequence[Page],
    present_keys: frozenset[str] | None,
    now: dt.datetime,
    seen_at: dt.datetime | None = None,
) -> Recorded:
    """Record pages found by a scan; queue a page event for each new or updated page.

    ``seen_at`` is when the pages were first seen or changed, where the source knows
    better than the clock (a git commit's time); ``now`` is when the poll happened.

    A page is new the first time its key is seen in this source, updated when its
    fingerprint (``updated`` date or a TL;DR) changed. The source's first scan is a
    baseline: pages are recorded, nothing is queued. ``present_keys`` (directory sources)
    marks pages whose files are gone as removed; feeds pass None since a feed is a window.
    """
    baseline = source.baseline_at is None
    seen = seen_at or now
    existing: dict[str, tuple[int, str, dt.datetime, str | None]] = {}
    keys = [page.key for page in found]
    for part in chunks(keys):
        rows = await conn.execute(
            select(
                pages.c.key, pages.c.id, pages.c.fingerprint, pages.c.first_seen_at, pages.c.paper
            ).where(pages.c.source_id == source.id, pages.c.key.in_(part))
        )
        for key, page_id, fingerprint, first_seen_at, paper in rows:
            existing[key] = (page_id, fingerprint, first_seen_at, paper)

    fresh = [p for p in found if p.key not in existing]
    known = [p for p in found if p.key in existing]
    fresh_papers = await _fresh_papers(conn, source_id=source.id, fresh=fresh, seen=seen)
    events: list[dict[str, object]] = []
    ids: dict[str, int] = {}

    for fresh_part in chunks(fresh):
        await conn.execute(
            insert(pages),
            [
                {
                    "source_id": source.id,
                    "key": p.key,
                    "url": p.url,
                    "type": p.type,
                    "arxiv": p.arxiv,
                    "paper": fresh_papers[p.key],
                    "created": not_after(p.created, now),
                    "updated": not_after(p.updated, now),
                    "fingerprint": p.fingerprint,
                    "first_seen_at": seen,
                    "changed_at": seen,
                }
                for p in fresh_part
            ],
        )
        rows = await conn.execute(
            select(pages.c.key, pages.c.id).where(
                pages.c.source_id == source.id, pages.c.key.in_([p.key for p in fresh_part])
            )
        )
        ids.update({key: page_id for key, page_id in rows})
    for p in fresh:
        events.append(_event(ids[p.key], ChangeKind.NEW, p.fingerprint, seen))

    updated = 0
    for p in known:
        page_id, fingerprint, first_seen_at, paper = existing[p.key]
        ids[p.key] = page_id
        changed = fingerprint != p.fingerprint
        # A page known by its path keeps the identity it was first seen with (a rename
        # keeps it); an arXiv id or DOI it names now is its identity.
        identity = p.paper
        if paper is not None and papers.is_path_id(identity):
            identity = paper
        await conn.execute(
            update(pages)
            .where(pages.c.id == page_id)
            .values(
                url=p.url,
                type=p.type,
                arxiv=p.arxiv,
                paper=identity,
                created=not_after(p.created, first_seen_at),
                updated=not_after(p.updated, first_seen_at),
                fingerprint=p.fingerprint,
                removed_at=None,
                **({"changed_at": seen} if changed else {}),
            )
        )
        if changed:
            updated += 1
            events.append(_event(page_id, ChangeKind.UPDATED, p.fingerprint, seen))

    known_ids = [ids[p.key] for p in known]
    for id_part in chunks(known_ids):
        await conn.execute(delete(page_texts).where(page_texts.c.page_id.in_(id_part)))
        await conn.execute(delete(page_tags).where(page_tags.c.page_id.in_(id_part)))
    text_rows = [
        {"page_id": ids[p.key], "lang": t.lang, "title": t.title, "tldr": t.tldr}
        for p in found
        for t in p.texts
    ]
    tag_rows = [
        {"page_id": ids[p.key], "tag": tag, "position": i}
        for p in found
        for i, tag in enumerate(p.tags)
    ]
    for text_part in chunks(text_rows):
        await conn.execute(insert(page_texts), list(text_part))
    for tag_part in chunks(tag_rows):
        await conn.execute(insert(page_tags), list(tag_part))

    if present_keys is not None:
        await _mark_removed(conn, source_id=source.id, present_keys=present_keys, now=now)

    queued = 0
    if not baseline and events:
        for event_part in chunks(events):
            await conn.execute(insert(page_events), list(event_part))
        queued = len(events)
    await conn.execute(
        update(sources)
        .where(sources.c.id == source.id)
        .values(
            baseline_at=source.baseline_at or now,
            last_poll_at=now,
            last_ok_at=now,
            last_error=None,
        )
    )
    return Recorded(new=len(fresh), updated=updated, queued=queued)


async def _fresh_papers(
    conn: AsyncConnection, *, source_id: int, fresh: Sequence[Page], seen: dt.datetime
) -> dict[str, str]:
    """The identities of pages seen for the first time, by key.

    A page known by its path alone whose path identity another page of the same source
    already holds (a page renamed away from that path keeps it) gets an identity of its
    own: it is another page, not that one again. The same path in another source is the
    same page (one wiki read through two sources).
    """
    result = {p.key: p.paper for p in fresh}
    by_path = [identity for identity in result.values() if papers.is_path_id(identity)]
    taken: set[str] = set()
    for part in chunks(by_path):
        rows = await conn.execute(
            select(pages.c.paper).where(pages.c.source_id == source_id, pages.c.paper.in_(part))
        )
        taken.update(paper for (paper,) in rows if paper is not None)
    for key, identity in result.items():
        if identity in taken:
            suffix = "@" + seen.isoformat()
            result[key] = identity[: papers.MAX_PAPER_CHARS - len(suffix)] + suffix
    return result


def not_after(day: dt.date | None, seen: dt.datetime) -> dt.date | None:
    """A page's date as stored: never after the day it was first seen. A page dated in the
    future (``created: 2027-03-01``) would otherwise be the newest page of every list until
    that day, ahead of pages published since."""
    return day if day is None or day <= seen.date() else seen.date()


async def rename_pages(
    conn: AsyncConnection, *, source_id: int, renames: Sequence[tuple[str, str]]
) -> int:
    """Give pages of a source their new keys (a git rename): the page keeps its id, so
    what chats received of it, their votes and its history stay with it, and it is not
    offered again as new. A rename onto a key the source already has is left alone (that
    page stays; the old one is marked removed by the scan). Returns the pages renamed."""
    renamed = 0
    for old_key, new_key in renames:
        taken = await conn.scalar(
            select(pages.c.id).where(pages.c.source_id == source_id, pages.c.key == new_key)
        )
        if taken is not None:
            continue
        result = await conn.execute(
            update(pages)
            .where(pages.c.source_id == source_id, pages.c.key == old_key)
            .values(key=new_key)
        )
        renamed += result.rowcount or 0
    return renamed


def _event(page_id: int, kind: ChangeKind, fingerprint: str, now: dt.datetime) -> dict[str, object]:
    return {"page_id": page_id, "kind": kind.value, "fingerprint": fingerprint, "created_at": now}


async def _mark_removed(
    conn: AsyncConnection, *, source_id: int, present_keys: frozenset[str], now: dt.datetime
) -> None:
    rows = await conn.execute(
        select(pages.c.id, pages.c.key).where(
            pages.c.source_id == source_id, pages.c.removed_at.is_(None)
        )
    )
    gone = [page_id for page_id, key in rows if key not in present_keys]
    for part in chunks(gone):
        await conn.execute(update(pages).where(pages.c.id.in_(part)).values(removed_at=now))


async def record_failure(
    conn: AsyncConnection, *, source_id: int, error: str, now: dt.datetime
) -> None:
    await conn.execute(
        update(sources)
        .where(sources.c.id == source_id)
        .values(last_poll_at=now, last_error=error[:2000])
    )


async def save_validators(
    conn: AsyncConnection, *, source_id: int, etag: str | None, last_modified: str | None
) -> None:
    await conn.execute(
        update(sources)
        .where(sources.c.id == source_id)
        .values(etag=etag, last_modified=last_modified)
    )


async def tags_of(conn: AsyncConnection, page_ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """The tags of pages by id, each page's in its own order; a page without tags is left out."""
    tags: dict[int, list[str]] = {}
    for part in chunks(list(page_ids)):
        rows = await conn.execute(
            select(page_tags.c.page_id, page_tags.c.tag)
            .where(page_tags.c.page_id.in_(part))
            .order_by(page_tags.c.page_id, page_tags.c.position)
        )
        for page_id, tag in rows:
            tags.setdefault(page_id, []).append(tag)
    return {page_id: tuple(tagged) for page_id, tagged in tags.items()}


async def load_pages(conn: AsyncConnection, page_ids: Sequence[int]) -> dict[int, Page]:
    """Pages by id, with all their languages and tags."""
    result: dict[int, Page] = {}
    for part in chunks(list(page_ids)):
        head = (
            (
                await conn.execute(
                    select(pages, sources.c.name)
                    .join(sources, sources.c.id == pages.c.source_id)
                    .where(pages.c.id.in_(part))
                )
            )
            .mappings()
            .all()
        )
        texts: dict[int, list[PageText]] = {}
        rows = await conn.execute(
            select(page_texts).where(page_texts.c.page_id.in_(part)).order_by(page_texts.c.lang)
        )
        for r in rows.mappings():
            texts.setdefault(r["page_id"], []).append(
                PageText(lang=r["lang"], title=r["title"], tldr=r["tldr"])
            )
        tags = await tags_of(conn, part)
        for h in head:
            if h["id"] not in texts:
                continue
            result[h["id"]] = Page(
                source=h["name"],
                key=h["key"],
                texts=tuple(texts[h["id"]]),
                tags=tags.get(h["id"], ()),
                url=h["url"],
                type=h["type"],
                arxiv=h["arxiv"],
                created=h["created"],
                updated=h["updated"],
            )
    return result
