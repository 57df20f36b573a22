"""What the incident checks read and write: streaks, send outcomes, incidents, admins."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import and_, case, delete, func, insert, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.rules.alerts import AuthState, Observation, SendCounts, SlowCounts
from bot.store.outbox import FAILED, HELD, QUEUED, SENDING, SENT
from bot.store.schema import alert_admins, auth_failures, chats, incidents, outbox, source_streaks


@dataclass(frozen=True, slots=True)
class AdminChoice:
    enabled: bool
    chat_pk: int | None


async def record_poll(
    conn: AsyncConnection, outcomes: Iterable[tuple[str, str | None]], *, now: dt.datetime
) -> None:
    """Each source's streak of failed polls: ``(source id, error)``, error None for a
    success."""
    for name, error in outcomes:
        found = (
            await conn.execute(
                select(source_streaks.c.failures).where(source_streaks.c.name == name)
            )
        ).scalar_one_or_none()
        failures = 0 if error is None else (found or 0) + 1
        values = {"failures": failures, "last_error": error, "updated_at": now}
        if found is None:
            await conn.execute(insert(source_streaks).values(name=name, **values))
        else:
            await conn.execute(
                update(source_streaks).where(source_streaks.c.name == name).values(**values)
            )


async def record_auth_failure(
    conn: AsyncConnection, *, platform: str, reason: str, now: dt.datetime
) -> None:
    await conn.execute(delete(auth_failures).where(auth_failures.c.platform == platform))
    await conn.execute(
        insert(auth_failures).values(platform=platform, reason=reason[:500], failed_at=now)
    )


async def adopt_source_keys(conn: AsyncConnection, renames: Mapping[str, str]) -> int:
    """Streaks and open incidents recorded under a source's former key, now under its id.

    Before sources had ids, streaks were keyed by the source's name (its redacted URL) and
    incidents were ``source:NAME``; ``renames`` maps each such name to the id that replaces
    it. A streak is moved only where the id has none yet, so an upgrade keeps each failing
    streak and open incident (no false "recovered" nor a second "failing" alert). Returns
    how many rows moved.
    """
    moved = 0
    for old, new in renames.items():
        if old == new:
            continue
        has_new = select(source_streaks.c.name).where(source_streaks.c.name == new)
        if (await conn.execute(has_new)).first() is None:
            done = await conn.execute(
                update(source_streaks).where(source_streaks.c.name == old).values(name=new)
            )
            moved += done.rowcount or 0
        old_key, new_key = f"source:{old}", f"source:{new}"
        still_open = incidents.c.cleared_at.is_(None)
        has_open = select(incidents.c.id).where(incidents.c.key == new_key, still_open)
        if (await conn.execute(has_open)).first() is None:
            done = await conn.execute(
                update(incidents).where(incidents.c.key == old_key, still_open).values(key=new_key)
            )
            moved += done.rowcount or 0
    return moved


async def observe(
    conn: AsyncConnection, *, sources: Mapping[str, str], now: dt.datetime, window: dt.timedelta
) -> Observation:
    """The bot as an incident check sees it at ``now``; ``sources`` the configured sources'
    names by id.

    A send counts as failed when its last attempt (the time it was claimed) falls in the
    window and failed, whether it waits for a retry or failed for good, and its chat is still
    active: a chat that blocked the bot or was archived is the chat's doing, not an outage.
    """
    since = now - window
    streaks = {
        name: (failures, error)
        for name, failures, error in await conn.execute(
            select(
                source_streaks.c.name, source_streaks.c.failures, source_streaks.c.last_error
            ).where(source_streaks.c.name.in_(list(sources.keys())))
        )
    }
    sent: dict[str, int] = {
        platform: int(n)
        for platform, n in await conn.execute(
            select(outbox.c.platform, func.count())
            .where(outbox.c.status == SENT, outbox.c.sent_at >= since)
            .group_by(outbox.c.platform)
        )
    }
    failing = or_(
        outbox.c.status == FAILED,
        and_(outbox.c.status == QUEUED, outbox.c.attempts > 0, outbox.c.last_error.is_not(None)),
    )
    failed: dict[str, int] = {
        platform: int(n)
        for platform, n in await conn.execute(
            select(outbox.c.platform, func.count())
            .join(chats, chats.c.id == outbox.c.chat_pk)
            .where(failing, outbox.c.claimed_at >= since, chats.c.state == "active")
            .group_by(outbox.c.platform)
        )
    }
    sends = {
        platform: SendCounts(sent=sent.get(platform, 0), failed=failed.get(platform, 0))
        for platform in sent.keys() | failed.keys()
    }
    waiting = and_(outbox.c.status.in_((QUEUED, SENDING)), outbox.c.not_before <= now)
    oldest, depth = (
        await conn.execute(select(func.min(outbox.c.created_at), func.count()).where(waiting))
    ).one()
    slow = {
        platform: SlowCounts(unknown=int(unknown), held=int(held or 0))
        for platform, unknown, held in await conn.execute(
            select(
                outbox.c.platform,
                func.count(),
                func.sum(case((outbox.c.status == HELD, 1), else_=0)),
            )
            .where(outbox.c.unknown_sends > 0, outbox.c.claimed_at >= since)
            .group_by(outbox.c.platform)
        )
    }
    auth: dict[str, AuthState] = {}
    for platform, reason, failed_at in await conn.execute(select(auth_failures)):
        later = await conn.execute(
            select(outbox.c.id)
            .where(
                outbox.c.platform == platform,
                outbox.c.status == SENT,
                outbox.c.sent_at > failed_at,
            )
            .limit(1)
        )
        auth[platform] = AuthState(
            reason=reason, failed_at=failed_at, recovered=later.first() is not None
        )
    return Observation(
        source_streaks=streaks,
        source_names=dict(sources),
        sends=sends,
        oldest_due=(now - oldest) if oldest is not None else dt.timedelta(),
        queue_depth=int(depth or 0),
        auth=auth,
        slow=slow,
    )


# Any fixed number: the key of the PostgreSQL advisory lock that serialises incident checks.
_INCIDENTS_LOCK = 0x74726E64


async def lock_incidents(conn: AsyncConnection) -> None:
    """Hold, until the transaction ends, the right to start and end incidents. (SQLite's
    writing transactions already run one at a time.)"""
    if conn.dialect.name == "postgresql":
        await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _INCIDENTS_LOCK})


async def open_incidents(conn: AsyncConnection) -> dict[str, int]:
    rows = await conn.execute(
        select(incidents.c.key, incidents.c.id).where(incidents.c.cleared_at.is_(None))
    )
    return {key: incident_id for key, incident_id in rows}


async def start_incident(
    conn: AsyncConnection, *, key: str, detail: Mapping[str, object], now: dt.datetime
) -> None:
    await conn.execute(
        insert(incidents).values(
            key=key, detail=json.dumps(detail, ensure_ascii=False), started_at=now
        )
    )


async def clear_incident(conn: AsyncConnection, *, incident_id: int, now: dt.datetime) -> None:
    await conn.execute(
        update(incidents).where(incidents.c.id == incident_id).values(cleared_at=now)
    )


async def incident_log(conn: AsyncConnection) -> list[tuple[str, dt.datetime, dt.datetime | None]]:
    """Every incident, oldest first: ``(key, started_at, cleared_at)``."""
    rows = await conn.execute(
        select(incidents.c.key, incidents.c.started_at, incidents.c.cleared_at).order_by(
            incidents.c.id
        )
    )
    return [(key, started, cleared) for key, started, cleared in rows]


async def admin_choices(conn: AsyncConnection) -> dict[tuple[str, str], AdminChoice]:
    rows = await conn.execute(select(alert_admins))
    return {
        (r["platform"], r["user_id"]): AdminChoice(enabled=r["enabled"], chat_pk=r["chat_pk"])
        for r in rows.mappings()
    }


async def choose(
    conn: AsyncConnection,
    *,
    platform: str,
    user_id: str,
    chat_pk: int | None,
    enabled: bool,
    now: dt.datetime,
) -> None:
    """An admin's choice (``alerts on|off``) and the private chat alerts go to."""
    where = and_(alert_admins.c.platform == platform, alert_admins.c.user_id == user_id)
    found = (await conn.execute(select(alert_admins.c.enabled).where(where))).first()
    values = {"chat_pk": chat_pk, "enabled": enabled, "updated_at": now}
    if found is None:
        await conn.execute(
            insert(alert_admins).values(platform=platform, user_id=user_id, **values)
        )
    else:
        await conn.execute(update(alert_admins).where(where).values(**values))
