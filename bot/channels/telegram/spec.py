"""Telegram as a platform (:mod:`bot.channels.platform`): its variables, its rules, and how
to open it.

Its variables are a section of their own (:class:`.settings.TelegramSettings`).

python-telegram-bot loads only where Telegram is configured (:mod:`.connect`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot import platforms
from bot.channels.platform import Opening, PlatformSpec, Route
from bot.channels.telegram.settings import TelegramSettings, enabled, telegram_settings
from bot.models import Platform
from bot.settings import Settings

if TYPE_CHECKING:
    from bot.channels.telegram.connect import TelegramConnection

TELEGRAM = Platform.TELEGRAM
# POST /telegram/webhook: the updates Telegram posts where TELEGRAM_WEBHOOK_URL is set.
WEBHOOK = Route("POST", "/telegram/webhook")
# A Telegram bot token anywhere in a URL or message (the library logs request URLs).
TOKEN_IN_TEXT = re.compile(r"\b\d{5,20}:[A-Za-z0-9_-]{30,}\b")


def _admin_ids(settings: Settings) -> tuple[str, ...]:
    found = telegram_settings(settings)
    return () if found is None else tuple(str(i) for i in found.telegram_admin_ids)


def _admins(settings: Settings) -> platforms.AdminCheck:
    """``TELEGRAM_ADMIN_IDS``: numeric user ids; the entry is the id."""
    ids = set(_admin_ids(settings))
    return lambda user, _workspace: user if user in ids else None


def _admin_chat(_settings: Settings, entry: str) -> platforms.AdminChat:
    # A private chat's id is its user's; the bot may post there once the user wrote to it.
    return platforms.AdminChat(chat_id=entry, opened=False)


def _connect(opening: Opening) -> TelegramConnection:
    from bot.channels.telegram.connect import connect

    return connect(opening, webhook=WEBHOOK)


RULES = platforms.PlatformRules(
    name=TELEGRAM,
    enabled=enabled,
    admin_ids=_admin_ids,
    admins=_admins,
    admin_chat=_admin_chat,
    private_replies=False,  # a reply in a group is the group's message
    redact=(TOKEN_IN_TEXT,),
    loggers=("telegram",),
)
PLATFORM = PlatformSpec(rules=RULES, connect=_connect, routes=(WEBHOOK,), settings=TelegramSettings)

platforms.register(RULES)
