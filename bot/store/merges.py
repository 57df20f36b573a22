"""Chat migrations: a chat moves to a new id, and two rows of one chat become one.

A Telegram group that becomes a supergroup gets a new chat id; a Slack chat of a
single-token setup is addressed by its workspace once the app is installed there.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.models import Platform
from bot.store.chats import (
    BY_ADDRESS,
    UPDATE,
    ChatRecord,
    filter_of,
    get,
    record_from_row,
    save_tags,
)
from bot.store.schema import audit_log, broadcasts, chats, outbox
from bot.util import utcnow


async def readdress(
    engine: AsyncEngine, *, platform: Platform, old_chat_id: str, new_chat_id: str
) -> bool:
    """Chat ``old_chat_id`` is known as ``new_chat_id`` from now on, unless a chat has that
    id already (then both stay as they are: nothing is merged).

    Returns:
        Whether the chat moved.
    """
    async with engine.begin() as conn:
        old = await get(conn, platform=platform, chat_id=old_chat_id)
        return old is not None and await readdress_record(conn, old, new_chat_id=new_chat_id)


async def readdress_record(conn: AsyncConnection, record: ChatRecord, *, new_chat_id: str) -> bool:
    """:func:`readdress` of a chat already read, in the caller's transaction."""
    platform = record.chat.platform
    if await get(conn, platform=platform, chat_id=new_chat_id) is not None:
        return False
    await migrate_id(conn, pk=record.pk, new_chat_id=new_chat_id)
    return True


async def move(
    engine: AsyncEngine, *, platform: Platform, old_chat_id: str, new_chat_id: str
) -> bool:
    """:func:`migrate` in a transaction of its own; False when the old chat was never seen."""
    async with engine.begin() as conn:
        record = await migrate(
            conn, platform=platform, old_chat_id=old_chat_id, new_chat_id=new_chat_id
        )
    return record is not None


# What a chat's subscription is: taken from the newer row when a migration merge keeps it.
_SETTINGS_COLUMNS = (
    "state", "mode", "digest_time", "timezone", "lang", "filter", "next_digest_at",
    "inactive_reason", "inactive_code",
)  # fmt: skip


async def migrate_id(
    conn: AsyncConnection, *, pk: int, new_chat_id: str, now: dt.datetime | None = None
) -> ChatRecord | None:
    """A Telegram group became a supergroup: chat ``pk`` moves to ``new_chat_id``.

    When a chat already has the new id (someone typed a command in the supergroup before
    the bot learnt of the migration), the two rows become one, in the caller's transaction:

    * the older row survives (its id, cursor, ledger and queued messages stay), under the
      new id; the newer row's queued messages move to it, then the newer row is deleted;
    * the rows that name the chat by its address (``platform:chat_id``: the audit log,
      which ``stats`` counts the language toggle's presses from, and a broadcast's preview)
      take the new one: the chat's history follows it, as its ledger and votes do by key;
    * the settings (filter, mode, time, zone, language, state) stay the older row's, unless
      the newer row was changed after it was created (a ``/subscribe``, ``/mode``... in the
      supergroup): that was said after the migration, so the newer settings are kept. The
      cursor is then the later of the two, so nothing from before is replayed.

    Returns the chat as stored now; None when ``pk`` does not exist. Calling it again (two
    replicas seeing the same migration) changes nothing more.
    """
    now = now or utcnow()
    older = (await conn.execute(select(chats).where(chats.c.id == pk))).mappings().first()
    if older is None:
        return None
    params = {"platform": older["platform"], "chat_id": new_chat_id}
    newer = (await conn.execute(BY_ADDRESS, params)).mappings().first()
    values: dict[str, Any] = {"chat_id": new_chat_id, "updated_at": now}
    new_filter: str | None = None
    if newer is not None and newer["id"] != pk:
        if newer["updated_at"] > newer["created_at"]:
            values.update({name: newer[name] for name in _SETTINGS_COLUMNS})
            values["cursor"] = max(older["cursor"], newer["cursor"])
            new_filter = newer["filter"]
        await conn.execute(update(outbox).where(outbox.c.chat_pk == newer["id"]).values(chat_pk=pk))
        await conn.execute(delete(chats).where(chats.c.id == newer["id"]))
    row = (await conn.execute(UPDATE, {**values, "pk": pk})).mappings().one()
    await _readdress_history(
        conn,
        old=f"{older['platform']}:{older['chat_id']}",
        new=f"{older['platform']}:{new_chat_id}",
    )
    if new_filter is not None and new_filter != older["filter"]:
        await save_tags(conn, pk, filter_of(new_filter))
    return record_from_row(row)


async def _readdress_history(conn: AsyncConnection, *, old: str, new: str) -> None:
    """The rows naming a chat by its address ``old`` name it ``new``."""
    if old == new:
        return
    await conn.execute(update(audit_log).where(audit_log.c.chat == old).values(chat=new))
    await conn.execute(
        update(broadcasts).where(broadcasts.c.origin_chat == old).values(origin_chat=new)
    )


async def migrate(
    conn: AsyncConnection, *, platform: Platform, old_chat_id: str, new_chat_id: str
) -> ChatRecord | None:
    """:func:`migrate_id` by the old address; None when the old chat was never seen."""
    old = await get(conn, platform=platform, chat_id=old_chat_id)
    if old is None:
        return None
    return await migrate_id(conn, pk=old.pk, new_chat_id=new_chat_id)
