"""The admins' audit trail.

Every admin action, and every refused attempt at one, is an entry of the audit log
(:func:`bot.store.admin.audit`) under the caller's address and chat; ``trendbot audit``
lists them. Each part of the admin module (:mod:`bot.commands.admin_parts`) writes its own
entries with :func:`record`; a refusal is :func:`refuse`.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.commands.base import Caller
from bot.store import admin as store

__all__ = ["actor", "chat_address", "record", "refuse"]

log = logging.getLogger("bot.admin")


def actor(caller: Caller) -> str:
    """Who did it: ``PLATFORM:USER_ID``."""
    return f"{caller.platform.value}:{caller.user_id}"


def chat_address(caller: Caller) -> str:
    """Where: ``PLATFORM:CHAT_ID``."""
    return f"{caller.platform.value}:{caller.chat_id}"


async def record(
    conn: AsyncConnection,
    caller: Caller,
    *,
    action: str,
    allowed: bool = True,
    detail: dict[str, Any] | None = None,
) -> None:
    """An entry of the audit log for what ``caller`` did (or was refused) in its chat."""
    await store.audit(
        conn,
        actor=actor(caller),
        chat=chat_address(caller),
        action=action,
        allowed=allowed,
        detail=detail,
    )


async def refuse(engine: AsyncEngine, caller: Caller, *, name: str) -> None:
    """Log and audit a non-admin's attempt at the admin command ``name`` (or at one of its
    buttons), in a transaction of its own."""
    log.warning("refused %s for a non-admin", name, extra={"chat": chat_address(caller)})
    async with engine.begin() as conn:
        await record(conn, caller, action=f"{name}.refused", allowed=False)
