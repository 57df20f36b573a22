"""Discord as a platform (:mod:`bot.channels.platform`): its variables, its rules, and how
to open it.

Its variables are a section of their own (:class:`.settings.DiscordSettings`).

The REST client and the interactions endpoint load only where ``DISCORD_BOT_TOKEN`` is set
(:mod:`.connect`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot import platforms
from bot.channels.discord.settings import DISCORD, DiscordSettings, enabled
from bot.channels.platform import Opening, PlatformSpec, Route
from bot.settings import Settings

if TYPE_CHECKING:
    from bot.channels.discord.connect import DiscordConnection

# Discord posts every interaction here (the application's Interactions Endpoint URL).
INTERACTIONS = Route("POST", "/discord/interactions")
# A link that adds the bot to a server: a redirect to Discord's OAuth2 authorize page.
INSTALL = Route("GET", "/discord/install")
# A bot token (:data:`.settings.TOKEN_RE`), wherever it turns up in a log line or an error.
TOKEN_IN_TEXT = re.compile(r"\b[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}\b")
# An interaction's token in a follow-up URL (/webhooks/APP/TOKEN), good for 15 minutes.
INTERACTION_TOKEN_IN_TEXT = re.compile(r"(?<=/webhooks/)([0-9]{1,20}/)[A-Za-z0-9_.-]{20,}")


def _admin_ids(settings: Settings) -> tuple[str, ...]:
    return settings.discord_admin_ids if isinstance(settings, DiscordSettings) else ()


def _admins(settings: Settings) -> platforms.AdminCheck:
    """``DISCORD_ADMIN_IDS``: user ids (snowflakes); the entry is the id."""
    ids = set(_admin_ids(settings))
    return lambda user, _workspace: user if user in ids else None


def _admin_chat(_settings: Settings, entry: str) -> platforms.AdminChat:
    # A DM channel has an id of its own, not the user's: an admin's alerts reach the DM
    # in which they answered ``alerts on`` (its chat is then kept with their choice).
    return platforms.AdminChat(chat_id=entry, opened=False)


def _connect(opening: Opening) -> DiscordConnection:
    from bot.channels.discord.connect import connect

    return connect(opening, interactions=INTERACTIONS, install=INSTALL)


RULES = platforms.PlatformRules(
    name=DISCORD,
    private_replies=True,  # every answer to a command or a press is ephemeral (flag 64)
    enabled=enabled,
    title="Discord",
    admin_ids=_admin_ids,
    admins=_admins,
    admin_chat=_admin_chat,
    redact=(TOKEN_IN_TEXT, INTERACTION_TOKEN_IN_TEXT),
    # A channel is changed by who may manage it, not by "the group's administrators".
    manager_refusals=(
        ("cmd.group_admins_only", "cmd.discord_manage_only"),
        ("cmd.group_admins_only_digest", "cmd.discord_manage_only_digest"),
    ),
)
PLATFORM = PlatformSpec(
    rules=RULES, connect=_connect, routes=(INTERACTIONS, INSTALL), settings=DiscordSettings
)

platforms.register(RULES)
