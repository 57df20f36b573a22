"""The chat platforms, as the ground and the commands know them: read from the settings.

Each platform package of :mod:`bot.channels` declares its :class:`PlatformRules` and
registers them as it loads, as it registers its renderer with :mod:`bot.render`; the
composition loads every package (:mod:`bot.channels.registry`). So nothing here, in the
settings, the logs or the commands names a platform: they loop over what is registered.
What only the running service needs of a platform (its sender, its inbound channel, its
web routes) is declared beside, in :class:`bot.channels.platform.PlatformSpec`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from bot.i18n import t
from bot.models import Platform
from bot.settings import Settings

# Who a user is among a platform's admins: given a user id and the workspace it was seen
# in (None where the platform has none), the admin variable's entry the user is (what an
# admin's ``alerts on|off`` is kept under), None for anyone else.
AdminCheck = Callable[[str, str | None], str | None]


def _nobody(_settings: Settings) -> AdminCheck:
    return lambda _user, _workspace: None


def _none(_settings: Settings) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True, slots=True)
class AdminChat:
    """The private chat an admin's alerts go to: ``chat_id``; ``opened`` when the bot
    may post there unasked (Slack's app DM, made here), else only once the admin has
    written to the bot (Telegram's private chat, whose id is the user's)."""

    chat_id: str
    opened: bool


@dataclass(frozen=True, slots=True)
class PlatformRules:
    """What the bot knows of a platform from the settings alone.

    Attributes:
        name: the stored name (``chats.platform``), ``PLATFORM`` of ``PLATFORM:CHAT_ID``.
        enabled: whether the settings configure the platform (its token is set...).
        title: its name as the stats and a broadcast's audience show it, where the
            catalogues have no ``admin.stats.platform.NAME`` (a proper noun: "Echo").
        admin_ids: the entries of its admin variable (``TELEGRAM_ADMIN_IDS``...), as
            written: the deployment admins the alerts go to.
        admins: from the settings, the check of a user against its admin variable.
        admin_chat: an admin entry's private chat (:class:`AdminChat`), None for none.
        workspace_admins: a workspace's own admin (Slack's) administers that workspace.
        operator: whoever uses it is the deployment's operator (the console, on the
            machine that runs the bot).
        private_replies: its replies to a command are seen only by the one who sent it,
            wherever it was sent (Slack's and Discord's ephemeral answers): ``stats`` may
            show the whole deployment's figures there, as in a private chat, and
            ``settings`` may show a group's page link there.
        remote: a chat platform reached over the network, not the local terminal: a
            broadcast's ``--platform`` may name it, and ``trendbot run`` with none
            configured opens the console.
        redact: text the logs never print (its tokens), however it turns up.
        loggers: its libraries' loggers, quiet below WARNING (they log request URLs).
        prefix: how its people type a command, as replies spell it (``/``; Slack's
            ``/trend ``), for a message the bot sends outside a command's reply.
        manager_refusals: the words of a refusal to a member who may not change a shared
            chat, where the platform names those who may otherwise than "this group's
            administrators": the catalogue key said instead of each general one (see
            :meth:`refusal`).
    """

    name: Platform
    enabled: Callable[[Settings], bool]
    title: str = ""
    admin_ids: Callable[[Settings], tuple[str, ...]] = _none
    admins: Callable[[Settings], AdminCheck] = _nobody
    admin_chat: Callable[[Settings, str], AdminChat | None] = lambda _settings, _entry: None
    workspace_admins: bool = False
    operator: bool = False
    private_replies: bool = False
    remote: bool = True
    prefix: Callable[[Settings], str] = lambda _settings: "/"
    redact: tuple[re.Pattern[str], ...] = ()
    loggers: tuple[str, ...] = ()
    manager_refusals: tuple[tuple[str, str], ...] = ()

    def refusal(self, key: str) -> str:
        """The catalogue key of the refusal ``key`` (``cmd.group_admins_only``...) in this
        platform's terms: every refusal to a member who may not manage goes through here."""
        return dict(self.manager_refusals).get(key, key)


_REGISTERED: dict[Platform, PlatformRules] = {}


def register(rules: PlatformRules) -> None:
    """Called by a platform package (``bot.channels.telegram``...) as it loads."""
    _REGISTERED[rules.name] = rules


def registered() -> tuple[PlatformRules, ...]:
    """Every platform registered, in the order their names were declared (the shipped
    ones first: Telegram, Slack, the console), whatever order their packages loaded in."""
    return tuple(_REGISTERED[name] for name in Platform if name in _REGISTERED)


def rules(platform: Platform) -> PlatformRules:
    try:
        return _REGISTERED[platform]
    except KeyError:
        raise LookupError(
            f"no platform {platform.value}: import bot.channels.{platform.value}"
        ) from None


def refusal(platform: Platform, key: str) -> str:
    """The catalogue key of the refusal ``key`` in ``platform``'s terms
    (:meth:`PlatformRules.refusal`); the general one where its package is not loaded (the
    command core used alone, as a test or a script may)."""
    found = _REGISTERED.get(platform)
    return found.refusal(key) if found is not None else key


def declare(name: str) -> Platform:
    """A new platform's name (:meth:`bot.models.Platform.declare`), for its package."""
    return Platform.declare(name)


def broadcast_names() -> tuple[str, ...]:
    """The platforms a broadcast's ``--platform`` may name: the remote ones."""
    return tuple(r.name.value for r in registered() if r.remote)


def title(name: str, lang: str) -> str:
    """The platform ``name`` as shown in ``lang``: the catalogues' name for it, else its
    own :attr:`PlatformRules.title`, else ``name``."""
    key = f"admin.stats.platform.{name}"
    shown = t(lang, key)
    if shown != key:
        return shown
    for rules in registered():
        if rules.name.value == name and rules.title:
            return rules.title
    return name


__all__ = [
    "AdminChat",
    "AdminCheck",
    "PlatformRules",
    "broadcast_names",
    "declare",
    "refusal",
    "register",
    "registered",
    "rules",
    "title",
]
