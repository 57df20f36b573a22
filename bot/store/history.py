"""What the store knows of one page in one chat, for ``why``: finding the page from what
a user typed, and the page's events, plan and messages for the chat."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

from sqlalchemy import case, func, literal, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.store.schema import chat_pages, chats, outbox, page_events, pages, sources

# Pages a slug may match before the newest is taken: enough to say how many matched.
MAX_MATCHES = 50


@dataclass(frozen=True, slots=True)
class Message:
    """An outbox message of the chat that carried (or was to carry) the page."""

    kind: str  # digest | page
    status: str  # queued | sending | sent | failed | dropped
    created_at: dt.datetime
    not_before: dt.datetime
    sent_at: dt.datetime | None
    last_error: str | None
    date: dt.date | None  # a digest's date
    left_out: bool  # counted in the digest's "and N more", not shown in it


@dataclass(frozen=True, slots=True)
class PageFacts:
    page_id: int
    first_seen_at: dt.datetime
    removed_at: dt.datetime | None
    baseline_at: dt.datetime | None  # the first scan of the page's source
    events: tuple[tuple[int, str, dt.datetime], ...]  # (id, kind, created_at), oldest first
    planned_at: dt.datetime | None  # when the chat's ledger got the page
    messages: tuple[Message, ...]  # oldest first
    chat_created_at: dt.datetime


async def find_pages(
    conn: AsyncConnection,
    *,
    arxiv: str | None = None,
    key: str | None = None,
    slug: str | None = None,
    url: str | None = None,
) -> list[int]:
    """Ids of the pages that match, one named exactly by ``url`` or ``key`` first, then
    newest first; removed pages last."""
    terms = []
    if arxiv:
        terms.append(pages.c.arxiv == arxiv)
        terms.append(pages.c.key.like(f"%/{_escape(arxiv)}-%", escape="\\"))
    if key:
        terms.append(pages.c.key == key)
        terms.append(pages.c.key.like(f"%/{_escape(key)}", escape="\\"))
    if slug:
        terms.append(pages.c.key.like(f"%-{_escape(slug)}", escape="\\"))
        terms.append(pages.c.key == slug)
    if url:
        terms.append(pages.c.url == url)
        terms.append(pages.c.key == url)
    if not terms:
        return []
    # A link or path that names one page exactly (a feed entry's link) comes first: of the
    # copies of one paper from several sources, the one asked for.
    exact = [pages.c.url == url, pages.c.key == url] if url else []
    exact += [pages.c.key == key] if key else []
    first = case((or_(*exact), 0), else_=1) if exact else literal(1)
    rows = await conn.execute(
        select(pages.c.id)
        .where(or_(*terms))
        .order_by(
            first,
            pages.c.removed_at.is_not(None),
            func.coalesce(pages.c.updated, pages.c.created).desc(),
            pages.c.id.desc(),
        )
        .limit(MAX_MATCHES)
    )
    return list(rows.scalars())


async def facts(conn: AsyncConnection, *, chat_pk: int, page_id: int) -> PageFacts | None:
    head = (
        await conn.execute(
            select(pages.c.first_seen_at, pages.c.removed_at, sources.c.baseline_at)
            .select_from(pages.join(sources, sources.c.id == pages.c.source_id))
            .where(pages.c.id == page_id)
        )
    ).first()
    created = (
        await conn.execute(select(chats.c.created_at).where(chats.c.id == chat_pk))
    ).scalar_one_or_none()
    if head is None or created is None:
        return None
    events = await conn.execute(
        select(page_events.c.id, page_events.c.kind, page_events.c.created_at)
        .where(page_events.c.page_id == page_id)
        .order_by(page_events.c.id)
    )
    planned = (
        await conn.execute(
            select(chat_pages.c.planned_at).where(
                chat_pages.c.chat_pk == chat_pk, chat_pages.c.page_id == page_id
            )
        )
    ).scalar_one_or_none()
    rows = await conn.execute(
        select(
            outbox.c.kind,
            outbox.c.status,
            outbox.c.created_at,
            outbox.c.not_before,
            outbox.c.sent_at,
            outbox.c.last_error,
            outbox.c.payload,
        )
        .where(
            outbox.c.chat_pk == chat_pk,
            outbox.c.kind.in_(("digest", "page")),
            outbox.c.payload.like(f"%{page_id}%"),
        )
        .order_by(outbox.c.id)
    )
    messages = []
    for kind, status, created_at, not_before, sent_at, last_error, payload in rows:
        data = json.loads(payload)
        shown = {int(entry[0]) for entry in data.get("pages", ())}
        rest = {int(p) for p in data.get("rest", ())}
        if page_id not in shown | rest:
            continue
        date = data.get("date")
        messages.append(
            Message(
                kind=kind,
                status=status,
                created_at=created_at,
                not_before=not_before,
                sent_at=sent_at,
                last_error=last_error,
                date=dt.date.fromisoformat(date) if date else None,
                left_out=page_id not in shown,
            )
        )
    return PageFacts(
        page_id=page_id,
        first_seen_at=head[0],
        removed_at=head[1],
        baseline_at=head[2],
        events=tuple((i, k, at) for i, k, at in events),
        planned_at=planned,
        messages=tuple(messages),
        chat_created_at=created,
    )


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
