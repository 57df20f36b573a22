"""The admins' audit trail, and what the broadcast and stats commands need of the admin.

Every admin action, and every refused attempt at one, is an entry of the audit log
(:func:`bot.store.admin.audit`) under the caller's address and chat; ``trendbot audit``
lists them. :class:`AdminBase` is what :mod:`bot.commands.broadcast` and
:mod:`bot.commands.stats` use of :class:`bot.commands.operator.Admin`, which combines them.
"""

from __future__ import annotations

import abc
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.commands import Caller
from bot.sources import SourceSet
from bot.store import admin as store


class AdminBase(abc.ABC):
    """The store, the configured sources and who the caller may act for (the admin ids in
    :class:`bot.commands.operator.Admin`)."""

    _engine: AsyncEngine
    _sources: SourceSet

    @abc.abstractmethod
    def is_admin(self, caller: Caller) -> bool:
        """An admin of the deployment or, on Slack, of the caller's workspace."""

    @abc.abstractmethod
    def _workspace_only(self, caller: Caller) -> str | None:
        """The one workspace ``caller`` may see and act on, or None for all of them."""

    @abc.abstractmethod
    async def refused(self, caller: Caller, *, name: str) -> None:
        """Log and audit a non-admin's attempt at the command ``name``."""


def actor(caller: Caller) -> str:
    return f"{caller.platform.value}:{caller.user_id}"


def chat_address(caller: Caller) -> str:
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
