"""What every command module shares: the caller, the ports, and the plumbing that runs a
command in the chat's transaction.

A command's handler is a function of its area's module, declared with the registry
(:mod:`bot.commands.registry`). The command core (:mod:`bot.commands.core`) builds one
:class:`Ports` and passes it, or a :class:`Context` that carries it, to each handler it
dispatches; a handler reaches the store, the digest planner and the admin module through
it alone, so it can be run and tested by itself. :func:`may_manage`, :func:`save`,
:func:`chat_record` and :func:`answer` are the steps the areas share.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot import platforms
from bot.commands import registry
from bot.i18n import clean, negotiate, t
from bot.models import (
    ChatKind,
    ChatSettings,
    ChatState,
    Platform,
    Reply,
)
from bot.rules import schedule
from bot.store import chats as chat_store
from bot.store import current

__all__ = [
    "ECHO_CHARS",
    "MAX_COMMAND_CHARS",
    "STOPPED",
    "SUGGEST_CUTOFF",
    "AdminPort",
    "Caller",
    "ChatStatus",
    "Context",
    "Defaults",
    "DigestPort",
    "Ports",
    "answer",
    "chat_record",
    "echo",
    "may_manage",
    "refusal_key",
    "save",
    "split_command",
    "suggest_command",
]

T = TypeVar("T")

MAX_COMMAND_CHARS = 4000
# How close an unknown command must be to a known one for "did you mean" (difflib ratio).
SUGGEST_CUTOFF = 0.6
# Longest echo of a user's word in a reply: enough to recognise it, too short to spam.
ECHO_CHARS = 40


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a command, and where.

    ``can_manage`` answers whether the user may change a group's subscription (Telegram:
    the group's administrators); the core calls it only for mutating commands in groups
    (``chat_kind`` is ``GROUP``), before it opens a transaction.
    """

    platform: Platform
    chat_id: str
    user_id: str
    chat_kind: ChatKind = ChatKind.PRIVATE
    chat_title: str | None = None
    language_code: str | None = None
    can_manage: Callable[[], Awaitable[bool]] | None = None
    # Slack: the caller's workspace, and whether they installed the app there (an admin of
    # that workspace alone).
    workspace: str | None = None
    workspace_admin: bool = False
    # The user's time zone as the platform reports it (Slack users.info ``tz``): a new chat
    # starts in it when it is a zone a chat may use.
    timezone: str | None = None


@dataclass(frozen=True, slots=True)
class ChatStatus:
    """What a channel needs to know of a chat around a command."""

    lang: str
    state: ChatState
    # Deliveries are paused because the bot is not a member of the channel
    # (:class:`~bot.errors.NotInChannel`): the channel's replies say to invite it.
    waits_for_invite: bool


# A stopped chat, as :meth:`CommandCore.chat_reachable` revives it by default.
STOPPED = frozenset({ChatState.PAUSED, ChatState.INACTIVE})


class DigestPort(Protocol):
    """Plans a chat's pending digest now; returns how many pages it queued (0: none)."""

    async def send_now(self, chat_pk: int) -> int: ...


class AdminPort(Protocol):
    """Admin commands (broadcast, stats), served by the admin module
    (:class:`bot.commands.operator.Admin`, made of the parts of
    :mod:`bot.commands.admin_parts`)."""

    def is_admin(self, caller: Caller) -> bool: ...

    def alert_admin_id(self, caller: Caller) -> str | None:
        """The admin entry under which ``caller``'s alert choice is kept (a Telegram user id,
        a ``SLACK_ADMIN_IDS`` entry), or None when no alert can reach them: a workspace's
        admin who is no deployment admin, the console."""
        ...

    async def refused(self, caller: Caller, *, name: str) -> None: ...

    async def handle(
        self, caller: Caller, *, name: str, args: str, lang: str, prefix: str
    ) -> Reply: ...

    async def handle_action(self, caller: Caller, *, action: str, lang: str) -> Reply | None: ...


@dataclass(frozen=True, slots=True)
class Defaults:
    """What a new chat starts with (from the settings)."""

    digest_time: dt.time = dt.time(9, 0)
    timezone: str = "UTC"
    lang: str = "en"


def split_command(text: str) -> tuple[str, str]:
    """``/Subscribe@Bot rl +x`` -> (``subscribe``, ``rl +x``). The bot suffix is kept off by
    the channel; here a leading slash is optional (Slack's ``/trend subscribe rl``)."""
    text = text.strip()
    head, _, rest = text.partition(" ")
    if "\n" in head:
        head, _, more = head.partition("\n")
        rest = f"{more} {rest}".strip()
    return head.lstrip("/").split("@", 1)[0].lower(), rest.strip()


def suggest_command(name: str, known: Sequence[str] = registry.NAMES) -> str | None:
    """The known command closest to ``name`` (``subscrbe`` -> ``subscribe``), if any is
    close enough."""
    found = difflib.get_close_matches(name.lower(), known, n=1, cutoff=SUGGEST_CUTOFF)
    return found[0] if found else None


def echo(text: str) -> str:
    """A user's word as a reply quotes it: invisible and bidi controls removed, shortened."""
    return clean(text.strip())[:ECHO_CHARS]


@dataclass(frozen=True, slots=True)
class Ports:
    """What a command reaches beyond its chat, built once by the command core.

    ``engine`` runs the transactions that write, ``reader`` those that only read (see
    :func:`bot.store.engine.reader`); ``defaults`` is what a new chat starts with;
    ``digests`` plans a digest now and ``admin`` serves the admins' commands (None: the
    commands that need them say they are not available); ``public_base_url`` is where the
    feeds and the settings page are served (None: not served).
    """

    engine: AsyncEngine
    reader: AsyncEngine
    defaults: Defaults
    digests: DigestPort | None = None
    admin: AdminPort | None = None
    public_base_url: str | None = None

    async def in_chat(
        self,
        caller: Caller,
        body: Callable[[AsyncConnection, chat_store.ChatRecord], Awaitable[T]],
        *,
        write: bool,
    ) -> T:
        """``body`` on the caller's chat, in one transaction with reading the chat.

        With ``write`` false the transaction only reads (on SQLite it waits for no writer);
        a chat seen for the first time is created, in a transaction that writes, either way.
        """
        return await chat_store.in_chat(
            self.engine,
            defaults=self.new_chat(caller),
            title=caller.chat_title,
            body=body,
            write=write,
        )

    def new_chat(self, caller: Caller) -> ChatSettings:
        """The settings ``caller``'s chat starts with when it is seen for the first time: the
        caller's language and time zone when the platform tells them, else the defaults."""
        lang = negotiate(caller.language_code, default=self.defaults.lang)
        zone = self.defaults.timezone
        if caller.timezone and schedule.is_place_zone(caller.timezone):
            zone = schedule.resolve_zone(caller.timezone) or zone
        return ChatSettings(
            platform=caller.platform,
            chat_id=caller.chat_id,
            kind=caller.chat_kind,
            digest_time=self.defaults.digest_time,
            timezone=zone,
            lang=lang,
        )


@dataclass(frozen=True, slots=True)
class Context:
    """What a command run in its chat's transaction gets besides the chat and its arguments."""

    ports: Ports
    caller: Caller
    prefix: str  # how the channel spells commands in help texts ("/", "/trend ")
    conn: AsyncConnection  # the transaction the chat was read in


def refusal_key(caller: Caller, key: str = "cmd.group_admins_only") -> str:
    """The catalogue key refusing ``caller`` a change of a shared chat they may not manage,
    in their platform's terms (:meth:`bot.platforms.PlatformRules.refusal`)."""
    return platforms.refusal(caller.platform, key)


async def may_manage(caller: Caller) -> bool:
    """Whether ``caller`` may change their chat: anyone outside a group; in a group, who
    the platform says may (its administrators)."""
    if caller.chat_kind != ChatKind.GROUP or caller.can_manage is None:
        return True
    return await caller.can_manage()


async def save(
    conn: AsyncConnection,
    record: chat_store.ChatRecord,
    after: ChatSettings,
    *,
    check_tags: Sequence[str] = (),
) -> tuple[chat_store.ChatRecord, tuple[str, ...]]:
    """Store ``after`` (nothing is written when it equals the chat as read) and find which
    of ``check_tags`` no present page carries.

    Returns the record as stored, with the next digest the new settings give: a reply
    that shows a next digest reads it from there, never from the record before."""
    saved = record
    if after != record.chat:
        saved = await chat_store.save(conn, before=record, after=after)
    known = await current.known_tags(conn, check_tags) if check_tags else set()
    return saved, tuple(dict.fromkeys(tag for tag in check_tags if tag not in known))


async def chat_record(
    _conn: AsyncConnection, record: chat_store.ChatRecord
) -> chat_store.ChatRecord:
    """The chat as read: the body of :meth:`Ports.in_chat` that only wants the record."""
    return record


def answer(
    key: str, **params: object
) -> Callable[[AsyncConnection, chat_store.ChatRecord], Awaitable[Reply]]:
    """A body of :meth:`Ports.in_chat` whose reply needs nothing but the chat's language."""

    async def reply(_conn: AsyncConnection, record: chat_store.ChatRecord) -> Reply:
        lang = record.chat.lang
        return Reply(lang, t(lang, key, **params))

    return reply
