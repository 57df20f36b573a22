"""Who sent a Discord interaction, where, and what they may change there.

A guild channel's (or thread's) chat is changed by the members whose permissions there
(``member.permissions``, computed by Discord for that channel) include managing the
channel or the server; a DM's chat is its user's own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bot.channels.discord.settings import DISCORD
from bot.commands import Caller, registry
from bot.models import ChatKind

__all__ = [
    "ADMINISTRATOR",
    "MANAGERS",
    "MANAGE_CHANNELS",
    "MANAGE_GUILD",
    "SEND_MESSAGES",
    "SEND_MESSAGES_IN_THREADS",
    "VIEW_CHANNEL",
    "caller_of",
    "manages",
    "refused_manager",
]

# Permissions (topics/permissions#permissions-bitwise-permission-flags).
ADMINISTRATOR = 1 << 3
MANAGE_CHANNELS = 1 << 4
MANAGE_GUILD = 1 << 5
VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11
SEND_MESSAGES_IN_THREADS = 1 << 38
MANAGERS = ADMINISTRATOR | MANAGE_CHANNELS | MANAGE_GUILD


def caller_of(interaction: dict[str, Any]) -> Caller:
    """Who sent an interaction, and where: a guild channel's (or thread's) chat, whose
    members may change it when their permissions there include managing the channel or
    the server; or a DM's chat, its user's own."""
    member = interaction.get("member")
    user = member["user"] if isinstance(member, dict) else interaction["user"]
    channel = interaction.get("channel")
    title = channel.get("name") if isinstance(channel, dict) else None
    in_guild = "guild_id" in interaction
    permissions = int(member["permissions"]) if isinstance(member, dict) else 0
    return Caller(
        platform=DISCORD,
        chat_id=str(interaction["channel_id"]),
        user_id=str(user["id"]),
        chat_kind=ChatKind.GROUP if in_guild else ChatKind.PRIVATE,
        chat_title=title if isinstance(title, str) else None,
        language_code=interaction.get("locale"),
        can_manage=manages(permissions) if in_guild else None,
    )


def refused_manager(
    declared: registry.Command | None, caller: Caller, interaction: dict[str, Any]
) -> bool:
    """A command that changes a guild channel's chat, from a member who may not manage the
    channel: answered here, at once and without a write, in the words the core would say
    (:func:`bot.commands.base.refusal_key`), naming the permissions it takes."""
    if declared is None or declared.audience != registry.MANAGERS:
        return False
    if caller.chat_kind != ChatKind.GROUP:
        return False
    member = interaction.get("member")
    return isinstance(member, dict) and not int(member["permissions"]) & MANAGERS


def manages(permissions: int) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return bool(permissions & MANAGERS)

    return check
