"""Broadcasts, statistics and the audit log."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, case, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from bot import payloads
from bot.store import outbox, queueing
from bot.store.schema import audit_log, broadcasts, chat_tags, chats
from bot.store.schema import outbox as outbox_table
from bot.util import utcnow

PREVIEWED = "previewed"
CONFIRMED = "confirmed"
CANCELLED = "cancelled"
DONE = "done"
BROADCAST_PRIORITY = 0  # below digests: see bot.commands.operator for the fairness rule


@dataclass(frozen=True, slots=True)
class Audience:
    """Who a broadcast reaches: chats matching every given criterion."""

    tags: tuple[str, ...] = ()
    platform: str | None = None
    lang: str | None = None
    workspace: str | None = None  # Slack: only this workspace's chats (a workspace admin's)

    def as_json(self) -> str:
        data: dict[str, object] = {
            "tags": list(self.tags),
            "platform": self.platform,
            "lang": self.lang,
        }
        if self.workspace:
            data["workspace"] = self.workspace
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Audience:
        data = json.loads(text)
        return cls(
            tags=tuple(data["tags"]),
            platform=data["platform"],
            lang=data["lang"],
            workspace=data.get("workspace"),
        )


@dataclass(frozen=True, slots=True)
class AudienceSize:
    reach: int  # active chats
    skipped: int  # paused or inactive chats that match otherwise


@dataclass(frozen=True, slots=True)
class Broadcast:
    id: int
    text: str
    audience: Audience
    audience_size: int
    created_by: str
    origin_chat: str | None
    status: str


@dataclass(frozen=True, slots=True)
class Progress:
    broadcast_id: int
    total: int
    sent: int
    failed: int
    pending: int
    failures: tuple[tuple[str, int], ...]
    held: int = 0  # sent twice with no answer: they may have arrived, not sent again


def _audience_filter(audience: Audience) -> list[ColumnElement[bool]]:
    # A chat that follows nothing (never subscribed, or `unsubscribe all`) asked for nothing.
    conditions: list[ColumnElement[bool]] = [chats.c.filter != ""]
    if audience.platform:
        conditions.append(chats.c.platform == audience.platform)
    if audience.lang:
        conditions.append(chats.c.lang == audience.lang)
    if audience.workspace:
        conditions.append(chats.c.platform == "slack")
        conditions.append(chats.c.team_id == audience.workspace)
    if audience.tags:
        following = select(chat_tags.c.chat_pk).where(
            chat_tags.c.tag.in_(list(audience.tags)), chat_tags.c.kind != "excluded"
        )
        conditions.append(chats.c.id.in_(following))
    return conditions


async def audience_size(conn: AsyncConnection, audience: Audience) -> AudienceSize:
    conditions = _audience_filter(audience)
    rows = await conn.execute(
        select(chats.c.state, func.count()).where(*conditions).group_by(chats.c.state)
    )
    by_state = {state: int(n) for state, n in rows}
    active = by_state.pop("active", 0)
    return AudienceSize(reach=active, skipped=sum(by_state.values()))


async def create_broadcast(
    conn: AsyncConnection,
    *,
    text: str,
    audience: Audience,
    size: int,
    created_by: str,
    origin_chat: str | None,
) -> int:
    result = await conn.execute(
        insert(broadcasts)
        .values(
            text=text,
            audience=audience.as_json(),
            audience_size=size,
            created_by=created_by,
            origin_chat=origin_chat,
            status=PREVIEWED,
            created_at=utcnow(),
        )
        .returning(broadcasts.c.id)
    )
    return int(result.scalar_one())


async def broadcast_now(
    conn: AsyncConnection, *, text: str, audience: Audience, created_by: str
) -> tuple[int, int]:
    """A broadcast confirmed as it is created (the shell's ``--yes``): its id and the number
    of chats queued."""
    size = await audience_size(conn, audience)
    broadcast_id = await create_broadcast(
        conn,
        text=text,
        audience=audience,
        size=size.reach,
        created_by=created_by,
        origin_chat=None,
    )
    return broadcast_id, await confirm_broadcast(conn, broadcast_id) or 0


async def get_broadcast(conn: AsyncConnection, broadcast_id: int) -> Broadcast | None:
    row = (
        (await conn.execute(select(broadcasts).where(broadcasts.c.id == broadcast_id)))
        .mappings()
        .first()
    )
    if row is None:
        return None
    return Broadcast(
        id=row["id"],
        text=row["text"],
        audience=Audience.from_json(row["audience"]),
        audience_size=row["audience_size"],
        created_by=row["created_by"],
        origin_chat=row["origin_chat"],
        status=row["status"],
    )


async def confirm_broadcast(conn: AsyncConnection, broadcast_id: int) -> int | None:
    """Previewed -> confirmed, and one outbox row per active chat of the audience.

    Returns the number of chats queued, or None when the broadcast was not waiting for
    confirmation (already sent, cancelled, unknown): a second Confirm sends nothing.
    """
    now = utcnow()
    result = await conn.execute(
        update(broadcasts)
        .where(broadcasts.c.id == broadcast_id, broadcasts.c.status == PREVIEWED)
        .values(status=CONFIRMED, confirmed_at=now)
    )
    if result.rowcount != 1:
        return None
    broadcast = await get_broadcast(conn, broadcast_id)
    assert broadcast is not None
    rows = await conn.execute(
        select(chats.c.id, chats.c.platform).where(
            chats.c.state == "active", *_audience_filter(broadcast.audience)
        )
    )
    values = [
        queueing.row_values(
            chat_pk=pk,
            platform=platform,
            kind="broadcast",
            payload=payloads.Broadcast(text=broadcast.text),
            now=now,
            priority=BROADCAST_PRIORITY,
            broadcast_id=broadcast_id,
        )
        for pk, platform in rows
    ]
    await queueing.enqueue(conn, values)
    if not values:
        await conn.execute(
            update(broadcasts)
            .where(broadcasts.c.id == broadcast_id)
            .values(status=DONE, finished_at=now)
        )
    return len(values)


async def cancel_broadcast(conn: AsyncConnection, broadcast_id: int) -> bool:
    result = await conn.execute(
        update(broadcasts)
        .where(broadcasts.c.id == broadcast_id, broadcasts.c.status == PREVIEWED)
        .values(status=CANCELLED, finished_at=utcnow())
    )
    return result.rowcount == 1


async def progress(conn: AsyncConnection, broadcast_id: int) -> Progress:
    rows = await conn.execute(
        select(outbox_table.c.status, func.count())
        .where(outbox_table.c.broadcast_id == broadcast_id)
        .group_by(outbox_table.c.status)
    )
    by_status = {status: int(n) for status, n in rows}
    failures = await conn.execute(
        select(outbox_table.c.last_error, func.count())
        .where(
            outbox_table.c.broadcast_id == broadcast_id,
            outbox_table.c.status == outbox.FAILED,
        )
        .group_by(outbox_table.c.last_error)
        .order_by(func.count().desc())
        .limit(5)
    )
    return Progress(
        broadcast_id=broadcast_id,
        total=sum(by_status.values()),
        sent=by_status.get(outbox.SENT, 0),
        failed=by_status.get(outbox.FAILED, 0),
        pending=by_status.get(outbox.QUEUED, 0) + by_status.get(outbox.SENDING, 0),
        failures=tuple((error or "?", int(n)) for error, n in failures),
        held=by_status.get(outbox.HELD, 0),
    )


async def finish_if_done(conn: AsyncConnection, broadcast_id: int) -> Progress | None:
    """Mark a confirmed broadcast done once nothing of it is pending; only the first
    caller gets the final progress (so the report is sent once)."""
    state = await progress(conn, broadcast_id)
    if state.pending:
        return None
    result = await conn.execute(
        update(broadcasts)
        .where(broadcasts.c.id == broadcast_id, broadcasts.c.status == CONFIRMED)
        .values(status=DONE, finished_at=utcnow())
    )
    return state if result.rowcount == 1 else None


async def in_progress(conn: AsyncConnection, *, created_by: str | None = None) -> list[Progress]:
    """Confirmed broadcasts still going out (those of ``created_by``, when given)."""
    query = select(broadcasts.c.id).where(broadcasts.c.status == CONFIRMED)
    if created_by is not None:
        query = query.where(broadcasts.c.created_by == created_by)
    ids = await conn.execute(query.order_by(broadcasts.c.id))
    return [await progress(conn, broadcast_id) for (broadcast_id,) in ids]


async def audit(
    conn: AsyncConnection,
    *,
    actor: str,
    chat: str | None,
    action: str,
    allowed: bool,
    detail: dict[str, Any] | None = None,
) -> None:
    await conn.execute(
        insert(audit_log).values(
            at=utcnow(),
            actor=actor,
            chat=chat,
            action=action,
            allowed=allowed,
            detail=json.dumps(detail, ensure_ascii=False) if detail else None,
        )
    )


async def audit_entries(conn: AsyncConnection, *, since: dt.datetime | None) -> Sequence[Any]:
    query = select(audit_log).order_by(audit_log.c.id)
    if since is not None:
        query = query.where(audit_log.c.at >= since)
    return (await conn.execute(query)).mappings().all()


async def action_counts(
    conn: AsyncConnection, *, action: str, since: dt.datetime
) -> list[tuple[str, str, int]]:
    """``(chat, language, entries)`` of the audit log's ``action`` entries since ``since``
    whose detail names a ``lang`` (the language toggle's presses), most first."""
    query = select(audit_log.c.chat, audit_log.c.detail).where(
        audit_log.c.action == action, audit_log.c.at >= since
    )
    counts: dict[tuple[str, str], int] = {}
    for chat, detail in (await conn.execute(query)).all():
        try:
            lang = json.loads(detail or "{}").get("lang")
        except (ValueError, AttributeError):
            continue
        if isinstance(lang, str):
            key = (str(chat or ""), lang)
            counts[key] = counts.get(key, 0) + 1
    return sorted(((c, lang, n) for (c, lang), n in counts.items()), key=lambda r: (-r[2], r[0]))


async def chat_counts(
    conn: AsyncConnection, *, workspace: str | None = None
) -> list[tuple[str, str, int]]:
    """Chats by platform and state (of one Slack workspace, when given)."""
    query = select(chats.c.platform, chats.c.state, func.count())
    if workspace:
        query = query.where(chats.c.platform == "slack", chats.c.team_id == workspace)
    rows = await conn.execute(
        query.group_by(chats.c.platform, chats.c.state).order_by(chats.c.platform, chats.c.state)
    )
    return [(platform, state, int(n)) for platform, state, n in rows]


async def counts_since(
    conn: AsyncConnection, *, since: dt.datetime, chat_pks: Any = None
) -> dict[str, int]:
    """Messages by status: sent and failed since ``since``, and everything still queued (of
    the chats of the ``chat_pks`` subquery, when given)."""
    recent = outbox_table.c.created_at >= since
    query = select(
        func.sum(case((and_(outbox_table.c.status == outbox.SENT, recent), 1), else_=0)),
        func.sum(case((and_(outbox_table.c.status == outbox.FAILED, recent), 1), else_=0)),
        func.sum(case((outbox_table.c.status.in_((outbox.QUEUED, outbox.SENDING)), 1), else_=0)),
    )
    if chat_pks is not None:
        query = query.where(outbox_table.c.chat_pk.in_(chat_pks))
    row = (await conn.execute(query)).one()
    return {"sent": int(row[0] or 0), "failed": int(row[1] or 0), "queued": int(row[2] or 0)}


async def sent_per_day(
    conn: AsyncConnection, *, since: dt.datetime, chat_pks: Any = None
) -> dict[dt.date, int]:
    """Messages sent on each UTC day since ``since`` (of the chats of the ``chat_pks``
    subquery, when given); a day with none is absent."""
    day = func.date(outbox_table.c.sent_at)
    query = select(day, func.count()).where(
        outbox_table.c.status == outbox.SENT, outbox_table.c.sent_at >= since
    )
    if chat_pks is not None:
        query = query.where(outbox_table.c.chat_pk.in_(chat_pks))
    found: dict[dt.date, int] = {}
    for value, n in await conn.execute(query.group_by(day)):
        # PostgreSQL's date() is a date; SQLite's the text YYYY-MM-DD.
        when = value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))
        found[when] = found.get(when, 0) + int(n)
    return found


async def top_failures(
    conn: AsyncConnection, *, since: dt.datetime, limit: int = 5, chat_pks: Any = None
) -> list[tuple[str, int]]:
    count = func.count()
    query = select(outbox_table.c.last_error, count).where(
        outbox_table.c.status == outbox.FAILED, outbox_table.c.created_at >= since
    )
    if chat_pks is not None:
        query = query.where(outbox_table.c.chat_pk.in_(chat_pks))
    rows = await conn.execute(
        query.group_by(outbox_table.c.last_error).order_by(count.desc()).limit(limit)
    )
    return [(error or "?", int(n)) for error, n in rows]
