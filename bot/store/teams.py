"""Slack workspaces: the workspace (and Enterprise Grid organisation) each chat is in, and
what happens to a workspace's chats when the app is installed there or removed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.models import ChatState, Platform
from bot.store import outbox as outbox_store
from bot.store.chats import CODE_CHARS, LATEST_EVENT_ID, ChatRecord, record_from_row
from bot.store.merges import readdress_record
from bot.store.schema import chats
from bot.util import utcnow


async def record_workspace(
    engine: AsyncEngine, *, pk: int, team_id: str, enterprise_id: str | None
) -> None:
    """:func:`set_workspace` in a transaction of its own."""
    async with engine.begin() as conn:
        await set_workspace(conn, pk=pk, team_id=team_id, enterprise_id=enterprise_id)


async def set_workspace(
    conn: AsyncConnection, *, pk: int, team_id: str, enterprise_id: str | None
) -> None:
    """Record the Slack workspace (and Enterprise Grid organisation) chat ``pk`` is in."""
    await conn.execute(
        update(chats)
        .where(chats.c.id == pk)
        .values(team_id=team_id[:32], enterprise_id=(enterprise_id or "")[:32] or None)
    )


def _of_team(platform: Platform, team_id: str, enterprise_id: str | None) -> Any:
    """Chats of a workspace or, for an org-wide install (no team), of an organisation."""
    if team_id:
        return (chats.c.platform == platform.value) & (chats.c.team_id == team_id)
    return (chats.c.platform == platform.value) & (chats.c.enterprise_id == enterprise_id)


async def deactivate_team(
    conn: AsyncConnection,
    *,
    platform: Platform,
    team_id: str,
    enterprise_id: str | None = None,
    reason: str,
    code: str,
) -> list[int]:
    """Every active or paused chat of the workspace becomes inactive for ``reason``
    (``code``); their primary keys."""
    where = _of_team(platform, team_id, enterprise_id) & (chats.c.state != ChatState.INACTIVE.value)
    return await _change_state(
        conn,
        where,
        state=ChatState.INACTIVE.value,
        inactive_reason=reason[:500],
        inactive_code=code[:CODE_CHARS],
    )


async def reactivate_team(
    conn: AsyncConnection,
    *,
    platform: Platform,
    team_id: str,
    enterprise_id: str | None = None,
    codes: frozenset[str],
) -> int:
    """The workspace's chats made inactive for one of ``codes`` are active again, from the
    newest page event on: nothing missed is replayed. How many."""
    where = (
        _of_team(platform, team_id, enterprise_id)
        & (chats.c.state == ChatState.INACTIVE.value)
        & chats.c.inactive_code.in_(sorted(codes))
    )
    pks = await _change_state(
        conn,
        where,
        state=ChatState.ACTIVE.value,
        inactive_reason=None,
        inactive_code=None,
        cursor=LATEST_EVENT_ID.scalar_subquery(),
    )
    return len(pks)


async def _change_state(conn: AsyncConnection, where: Any, **values: Any) -> list[int]:
    """The chats matching ``where`` take ``values`` (and a new ``updated_at``); their primary
    keys, read first so that the caller can act on exactly those chats."""
    pks = [int(pk) for (pk,) in await conn.execute(select(chats.c.id).where(where))]
    if pks:
        await conn.execute(
            update(chats).where(chats.c.id.in_(pks)).values(**values, updated_at=utcnow())
        )
    return pks


async def team_installed(
    engine: AsyncEngine,
    *,
    platform: Platform,
    team_id: str,
    enterprise_id: str | None,
    address: Callable[[str], str],
    codes: frozenset[str],
) -> int:
    """The app was installed (again) in a workspace, in one transaction: its chats of a
    single-token setup move to ``address(chat_id)`` (:func:`readdress`: unless a chat has
    that id already), and :func:`reactivate_team` of ``codes``. How many became active."""
    async with engine.begin() as conn:
        if team_id:
            for old in await unaddressed_of_team(conn, platform=platform, team_id=team_id):
                await readdress_record(conn, old, new_chat_id=address(old.chat.chat_id))
        return await reactivate_team(
            conn, platform=platform, team_id=team_id, enterprise_id=enterprise_id, codes=codes
        )


async def team_removed(
    conn: AsyncConnection,
    *,
    platform: Platform,
    team_id: str,
    enterprise_id: str | None,
    reason: str,
    code: str,
) -> int:
    """:func:`deactivate_team`, and every message still queued for those chats fails with
    ``reason``, in the caller's transaction. How many chats."""
    pks = await deactivate_team(
        conn,
        platform=platform,
        team_id=team_id,
        enterprise_id=enterprise_id,
        reason=reason,
        code=code,
    )
    for pk in pks:
        await outbox_store.fail_chat(conn, chat_pk=pk, error=reason)
    return len(pks)


async def enterprise_of_team(
    conn: AsyncConnection, *, platform: Platform, team_id: str
) -> str | None:
    """The Enterprise Grid organisation a workspace's chats were seen in, if any."""
    row = (
        await conn.execute(
            select(chats.c.enterprise_id)
            .where(
                chats.c.platform == platform.value,
                chats.c.team_id == team_id,
                chats.c.enterprise_id.is_not(None),
            )
            .limit(1)
        )
    ).first()
    return str(row[0]) if row is not None else None


async def unaddressed_of_team(
    conn: AsyncConnection, *, platform: Platform, team_id: str
) -> list[ChatRecord]:
    """The workspace's chats whose id does not name the workspace (``C456``, not
    ``T123/C456``): those of a single-token setup."""
    rows = await conn.execute(
        select(chats).where(
            chats.c.platform == platform.value,
            chats.c.team_id == team_id,
            ~chats.c.chat_id.contains("/"),
        )
    )
    return [record_from_row(r) for r in rows.mappings()]
