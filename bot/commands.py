"""One command core for Telegram, Slack and the console.

A channel turns an inbound update into a :class:`Caller` and the command text, calls
:meth:`CommandCore.handle`, and renders the :class:`~bot.models.Reply` it gets back. The
core knows nothing of any platform: it parses, checks, applies to the store, and answers
in the chat's language.
"""

from __future__ import annotations

import datetime as dt
import difflib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, TypeVar
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot import command_table, feeds, filters, metrics, ranking, schedule, transfer, why
from bot.errors import FilterError, NotInChannel, TransferError
from bot.i18n import clean, t, tn
from bot.i18n import has as has_message
from bot.models import (
    LANGUAGES,
    Button,
    ChatKind,
    ChatSettings,
    ChatState,
    DigestItem,
    Filter,
    Mode,
    Platform,
    QuietHours,
    Reply,
    Toast,
    is_korean,
)
from bot.render import votes
from bot.render.text import format_date
from bot.schedule import zone_label
from bot.settings import parse_hhmm
from bot.store import admin as admin_store
from bot.store import alerts as alert_store
from bot.store import chats as chat_store
from bot.store import feedback as feedback_store
from bot.store import feeds as feed_store
from bot.store import pages as page_store
from bot.store.engine import reader
from bot.util import utcnow

log = logging.getLogger("bot.commands")

T = TypeVar("T")

LATEST_DEFAULT = 5
LATEST_MAX = 20
# `latest` reads this many newest pages per page it shows, then twice as many each round,
# until enough match: most filters match within the first round.
LATEST_SCAN_FACTOR = 4
# Inline keyboard of `subscribe` with no argument: enough to choose from, few enough to read.
PICKER_TAGS = 12
# How the tag picker marks a tag the chat follows, requires (+tag) or excludes (-tag).
PICKER_FOLLOWED = "✅ "
PICKER_REQUIRED = "➕ "
PICKER_EXCLUDED = "🚫 "
# Telegram callback_data is at most 64 bytes; "tog:" + a 64-character tag could exceed it.
MAX_ACTION_BYTES = 64
MAX_COMMAND_CHARS = 4000
# Commands that change the chat: in a group only its administrators may use them.
MUTATING = frozenset(
    c.name for c in command_table.COMMANDS if c.audience == command_table.Audience.MANAGERS
)
# Commands whose handler writes the chat, in the same transaction that reads it.
WRITING = (MUTATING - {"digest"}) | {"alerts"}
TOGGLE = "tog:"
# The bot admins' commands the admin module serves (`alerts` is the core's own).
ADMIN_COMMANDS = frozenset({"broadcast", "stats"})
KNOWN_COMMANDS = frozenset(command_table.NAMES)
LIMIT_MAX = 50
FEEDBACK_TOP = 5  # liked and disliked tags `feedback` shows, each
FEEDBACK_RESET = "fbreset:"
FEEDBACK_SHOWN_MIN = 0.1  # `feedback` shows weights to one decimal: smaller ones read as 0
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
# `tags` lists this many of the most used tags, then says how many more there are: a wiki
# with thousands of tags would otherwise fill dozens of messages.
TAGS_SHOWN = 100
# Commands in the order `help` lists them (see bot/command_table.py); `help COMMAND`
# explains one of them.
COMMAND_ORDER = command_table.NAMES
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
    """Admin commands (broadcast, stats), served by the admin module."""

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


def find_timezone(text: str) -> str | None:
    """The IANA zone ``text`` names: a zone in any case, a common abbreviation or an
    offset (``KST``, ``UTC+9``; see :func:`bot.schedule.resolve_zone`)."""
    return schedule.resolve_zone(text)


def suggest_command(name: str, known: Sequence[str] = COMMAND_ORDER) -> str | None:
    """The known command closest to ``name`` (``subscrbe`` -> ``subscribe``), if any is
    close enough."""
    found = difflib.get_close_matches(name.lower(), known, n=1, cutoff=SUGGEST_CUTOFF)
    return found[0] if found else None


def echo(text: str) -> str:
    """A user's word as a reply quotes it: invisible and bidi controls removed, shortened."""
    return clean(text.strip())[:ECHO_CHARS]


def format_wait(lang: str, hours: int, minutes: int) -> str:
    """``3 h 20 min`` / ``3시간 20분``; from a day on, to the hour: ``6 d 3 h``."""
    days, hours = divmod(hours, 24)
    if days:
        if hours:
            return t(lang, "wait.days_hours", days=days, hours=hours)
        return t(lang, "wait.days", days=days)
    if hours:
        return t(lang, "wait.hours_minutes", hours=hours, minutes=minutes)
    return t(lang, "wait.minutes", minutes=minutes)


def describe_next(
    chat: ChatSettings, *, next_at: dt.datetime | None, now: dt.datetime
) -> tuple[str, str] | None:
    """When a daily or weekly chat's next digest comes, in its zone (``today at 09:00``),
    and how long until then (``5 h 12 min``); None in instant mode."""
    if chat.mode == Mode.INSTANT:
        return None
    now = now.replace(tzinfo=dt.UTC) if now.tzinfo is None else now
    if next_at is None or next_at.replace(tzinfo=dt.UTC) <= now:
        due = schedule.next_due(
            at=chat.digest_time,
            timezone=zone_label(chat.timezone),
            after=now,
            weekday=chat.weekday if chat.mode == Mode.WEEKLY else None,
            quiet=chat.quiet,
        )
    else:
        due = next_at.replace(tzinfo=dt.UTC)
    zone = ZoneInfo(chat.timezone)
    local, today = due.astimezone(zone), now.astimezone(zone).date()
    at = local.strftime("%H:%M")
    lang = chat.lang
    if local.date() == today:
        when = t(lang, "when.today", time=at)
    elif local.date() == today + dt.timedelta(days=1):
        when = t(lang, "when.tomorrow", time=at)
    else:
        when = t(lang, "when.date", date=format_date(lang, local.date()), time=at)
    return when, format_wait(lang, *schedule.until(due, now))


class CommandCore:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        defaults: Defaults,
        digests: DigestPort | None = None,
        admin: AdminPort | None = None,
        public_base_url: str | None = None,
    ) -> None:
        self._engine = engine
        self._public_base_url = public_base_url
        self._reader = reader(engine)
        self._defaults = defaults
        self._digests = digests
        self._admin = admin
        self._handlers = self._handlers_by_name()

    # Entry points -----------------------------------------------------------------------

    async def handle(self, caller: Caller, text: str, *, prefix: str = "/") -> Reply:
        """Run one command. ``prefix`` is how the channel spells commands in help texts."""
        name, _ = split_command(text)
        label = name if name in KNOWN_COMMANDS else "unknown"
        started = time.perf_counter()
        try:
            return await self._handle(caller, text, prefix=prefix)
        finally:
            metrics.COMMANDS.labels(caller.platform.value, label).inc()
            metrics.COMMAND_LATENCY.labels(label).observe(time.perf_counter() - started)

    async def removed_from_chat(self, *, platform: Platform, chat_id: str) -> int:
        """The bot was removed from chat ``chat_id`` (or banned, or the chat archived): it
        and its forum topics become inactive and get nothing until a command revives them.

        Returns:
            How many chats became inactive (0: a chat the bot never knew).
        """
        return await chat_store.remove_bot(self._engine, platform=platform, chat_id=chat_id)

    async def chat_moved(self, *, platform: Platform, old_chat_id: str, new_chat_id: str) -> bool:
        """The platform moved a chat to a new id (a Telegram group became a supergroup):
        its subscription, ledger and queued messages move with it.

        Returns:
            False when the old chat was never seen (nothing to move).
        """
        return await chat_store.move(
            self._engine, platform=platform, old_chat_id=old_chat_id, new_chat_id=new_chat_id
        )

    async def chat_status(
        self,
        *,
        platform: Platform,
        chat_id: str,
        team_id: str | None = None,
        enterprise_id: str | None = None,
    ) -> ChatStatus | None:
        """The chat's language and delivery state, as a channel needs them around a command.

        With ``team_id`` (Slack: the workspace the request came from), a chat that does not
        know that workspace records it, with its Enterprise Grid organisation
        ``enterprise_id``: the workspace's token sends to the chat from then on.

        Returns:
            None for a chat never seen (nothing is created).
        """
        record = await chat_store.read(self._engine, platform=platform, chat_id=chat_id)
        if record is None:
            return None
        if team_id is not None and record.team_id != team_id:
            await chat_store.record_workspace(
                self._engine, pk=record.pk, team_id=team_id, enterprise_id=enterprise_id
            )
        chat = record.chat
        return ChatStatus(
            lang=chat.lang,
            state=chat.state,
            waits_for_invite=(
                chat.state == ChatState.PAUSED and record.inactive_code == NotInChannel.CODE
            ),
        )

    async def chat_gone(self, *, platform: Platform, chat_id: str, reason: str, code: str) -> bool:
        """The platform says chat ``chat_id`` can take no more messages (a Slack channel
        archived or deleted): it becomes inactive for ``reason`` (``code``, a short stable
        word) and what was queued for it fails.

        Returns:
            False when the chat was never seen or is inactive already (nothing changed).
        """
        return await chat_store.stop(
            self._engine, platform=platform, chat_id=chat_id, reason=reason, code=code
        )

    async def chat_reachable(
        self,
        *,
        platform: Platform,
        chat_id: str,
        codes: frozenset[str],
        states: frozenset[ChatState] = STOPPED,
        since: dt.datetime | None = None,
    ) -> bool:
        """The platform says chat ``chat_id`` can be posted to again (the bot was invited
        back, the channel unarchived): if it stopped for one of ``codes`` (at ``since`` or
        later, when given) and is in one of ``states``, it is active again, and gets what is
        published from now on.

        A chat stopped for another reason (its members paused it) stays as it is.

        Returns:
            Whether the chat became active.
        """
        return await chat_store.reactivate(
            self._engine,
            platform=platform,
            chat_id=chat_id,
            codes=codes,
            states=states,
            since=since,
        )

    async def chat_readdressed(
        self, *, platform: Platform, old_chat_id: str, new_chat_id: str
    ) -> bool:
        """The platform addresses a chat differently from now on (a Slack DM kept under its
        conversation id, now under the user's id): it moves to ``new_chat_id``, unless a
        chat already has that id (then both stay as they are).

        Returns:
            Whether the chat moved.
        """
        return await chat_store.readdress(
            self._engine, platform=platform, old_chat_id=old_chat_id, new_chat_id=new_chat_id
        )

    async def _handle(self, caller: Caller, text: str, *, prefix: str) -> Reply:
        name, args = split_command(text)
        if len(text) > MAX_COMMAND_CHARS:
            return await self._in_chat(caller, _answer("cmd.too_long"), write=False)
        if name in ADMIN_COMMANDS:
            return await self._admin_command(caller, name=name, args=args, prefix=prefix)
        handler = self._handlers.get(name)
        if handler is None and name != "digest":
            command = echo(name or text)
            suggestion = suggest_command(name) if name else None
            if suggestion is not None:
                unknown = _answer(
                    "cmd.did_you_mean", command=command, suggestion=suggestion, p=prefix
                )
            else:
                unknown = _answer("cmd.unknown", command=command, p=prefix)
            return await self._in_chat(caller, unknown, write=False)
        if name in MUTATING and not await self._may_manage(caller):
            # `digest` changes no setting: it sends the group's digest early, and says so.
            key = "cmd.group_admins_only_digest" if name == "digest" else "cmd.group_admins_only"
            return await self._in_chat(caller, _answer(key, p=prefix), write=False)
        if handler is None:
            return await self._digest(caller, prefix=prefix)

        async def run(conn: AsyncConnection, record: chat_store.ChatRecord) -> Reply:
            return await handler(record, args, _Context(caller=caller, prefix=prefix, conn=conn))

        return await self._in_chat(caller, run, write=name in WRITING)

    async def hint(self, caller: Caller, *, prefix: str = "/") -> Reply:
        """The answer to a message that is not a command (plain text in a private chat):
        one line that names ``help``, not the whole list of commands."""
        return await self._in_chat(caller, _answer("cmd.plain_hint", p=prefix), write=False)

    async def handle_action(
        self, caller: Caller, action: str, *, prefix: str = "/"
    ) -> Reply | Toast | None:
        """A button press. Returns the updated message, a :class:`Toast` for the one who
        pressed (the message stays), or None when nothing should change."""
        if action.startswith(votes.VOTE):
            return await self._vote(caller, action)
        if action.startswith(FEEDBACK_RESET):
            return await self._feedback_reset(caller, action, prefix=prefix)
        if action.startswith(TOGGLE):
            if not await self._may_manage(caller):
                return await self._in_chat(caller, _answer("cmd.group_admins_only"), write=False)

            async def toggle(conn: AsyncConnection, record: chat_store.ChatRecord) -> Reply:
                tag = action.removeprefix(TOGGLE)
                return await self._toggle(conn, record, tag, prefix=prefix)

            return await self._in_chat(caller, toggle, write=True)
        if self._admin is None:
            return None
        record = await self._in_chat(caller, _record, write=False)
        return await self._admin.handle_action(caller, action=action, lang=record.chat.lang)

    async def tag_names(self, *, limit: int) -> list[str]:
        """The ``limit`` most used tags of present pages (the console completes them)."""
        async with self._reader.connect() as conn:
            counts = await page_store.tag_counts(conn)
        return [clean(tag) for tag, _ in counts[:limit]]

    # Plumbing ---------------------------------------------------------------------------

    def _handlers_by_name(
        self,
    ) -> dict[str, Callable[[chat_store.ChatRecord, str, _Context], Awaitable[Reply]]]:
        """The commands run in the chat's transaction (``digest`` and the admin's are not)."""
        return {
            "start": self._help,
            "help": self._help,
            "subscribe": self._subscribe,
            "unsubscribe": self._unsubscribe,
            "tags": self._tags,
            "settings": self._settings,
            "mode": self._mode,
            "time": self._time,
            "timezone": self._timezone,
            "lang": self._lang,
            "pause": self._pause,
            "resume": self._resume,
            "latest": self._latest,
            "feed": self._feed,
            "export": self._export,
            "import": self._import,
            "alerts": self._alerts,
            "limit": self._limit,
            "quiet": self._quiet,
            "feedback": self._feedback,
            "why": self._why,
        }

    async def _in_chat(
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
            self._engine,
            defaults=self._new_chat(caller),
            title=caller.chat_title,
            body=body,
            write=write,
        )

    def _new_chat(self, caller: Caller) -> ChatSettings:
        lang = self._defaults.lang
        if is_korean(caller.language_code):
            lang = "ko"
        zone = self._defaults.timezone
        if caller.timezone and schedule.is_place_zone(caller.timezone):
            zone = schedule.resolve_zone(caller.timezone) or zone
        return ChatSettings(
            platform=caller.platform,
            chat_id=caller.chat_id,
            kind=caller.chat_kind,
            digest_time=self._defaults.digest_time,
            timezone=zone,
            lang=lang,
        )

    async def _may_manage(self, caller: Caller) -> bool:
        if caller.chat_kind != ChatKind.GROUP or caller.can_manage is None:
            return True
        return await caller.can_manage()

    async def _save(
        self,
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
        known = await page_store.known_tags(conn, check_tags) if check_tags else set()
        return saved, tuple(dict.fromkeys(tag for tag in check_tags if tag not in known))

    async def _admin_command(self, caller: Caller, *, name: str, args: str, prefix: str) -> Reply:
        record = await self._in_chat(caller, _record, write=False)
        lang = record.chat.lang
        if self._admin is None or not self._admin.is_admin(caller):
            if self._admin is not None:
                await self._admin.refused(caller, name=name)
            return Reply(lang, t(lang, "cmd.admins_only"))
        return await self._admin.handle(caller, name=name, args=args, lang=lang, prefix=prefix)

    # Commands ---------------------------------------------------------------------------

    async def _help(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        topic = args.strip().lstrip("/").split("@", 1)[0].lower()
        if topic:
            if topic in COMMAND_ORDER:
                return Reply(lang, t(lang, f"help.{topic}", p=ctx.prefix))
            suggestion = suggest_command(topic)
            if suggestion is not None:
                return Reply(lang, t(lang, f"help.{suggestion}", p=ctx.prefix))
            return Reply(lang, t(lang, "help.unknown", command=echo(topic), p=ctx.prefix))
        bot_admin = self._admin is not None and self._admin.is_admin(ctx.caller)
        parts = [t(lang, "cmd.greeting"), help_text(lang, prefix=ctx.prefix, bot_admin=bot_admin)]
        parts.append(self._describe_settings(record, prefix=ctx.prefix))
        return Reply(lang, "\n\n".join(parts))

    async def _settings(self, record: chat_store.ChatRecord, _args: str, ctx: _Context) -> Reply:
        return Reply(record.chat.lang, self._describe_settings(record, prefix=ctx.prefix))

    def _describe_settings(self, record: chat_store.ChatRecord, *, prefix: str) -> str:
        chat = record.chat
        lang = chat.lang
        text = t(
            lang,
            "cmd.settings",
            filter=describe_filter(chat.filter, lang=lang, prefix=prefix),
            mode=t(lang, f"cmd.mode.{chat.mode.value}"),
            time=chat.digest_time.strftime("%H:%M"),
            timezone=zone_label(chat.timezone),
            lang=t(lang, f"cmd.lang.{chat.lang}"),
            state=t(lang, f"cmd.state.{chat.state.value}"),
        )
        upcoming = describe_next(chat, next_at=record.next_digest_at, now=utcnow())
        if chat.filter.is_empty and chat.state == ChatState.ACTIVE:
            # Planning skips a chat whose filter lets nothing through: no digest comes.
            text += "\n" + t(lang, "cmd.settings.no_next", p=prefix)
        elif upcoming is not None and chat.state == ChatState.ACTIVE:
            when, wait = upcoming
            text += "\n" + t(
                lang, "cmd.settings.next", when=when, timezone=zone_label(chat.timezone), wait=wait
            )
        return f"{text}\n{describe_schedule(record)}"

    async def _subscribe(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        if not args:
            return await self._picker(ctx.conn, record, prefix=ctx.prefix)
        try:
            items = filters.parse_items([args])
            new_filter = filters.add(record.chat.filter, items)
        except FilterError as exc:
            return self._filter_error(lang, exc, command="subscribe", prefix=ctx.prefix)
        after = replace(record.chat, filter=new_filter)
        if after.state == ChatState.INACTIVE:
            after = replace(after, state=ChatState.ACTIVE)
        stored, unknown = await self._save(
            ctx.conn, record, after, check_tags=[i.tag for i in items if i.kind != "everything"]
        )
        saved = stored.chat
        reply = self._filter_reply(saved, unknown=unknown, prefix=ctx.prefix)
        if record.chat.filter.is_empty and not saved.filter.is_empty:
            first = await self._first_digest_note(ctx.conn, stored, prefix=ctx.prefix)
            if first:
                reply = replace(reply, text=f"{reply.text}\n\n{first}")
        return reply

    async def _first_digest_note(
        self, conn: AsyncConnection, record: chat_store.ChatRecord, *, prefix: str
    ) -> str:
        """For a chat that never had a digest (``record`` as stored after the change): when
        the first one comes, and that ``digest`` sends it now; ``""`` for a chat that had one."""
        if await chat_store.had_pages(conn, record.pk):
            return ""
        chat = record.chat
        lang = chat.lang
        upcoming = describe_next(chat, next_at=record.next_digest_at, now=utcnow())
        if upcoming is None:
            return t(lang, "subscribe.first_instant", p=prefix)
        when, wait = upcoming
        return t(
            lang,
            "subscribe.first_digest",
            when=when,
            timezone=zone_label(chat.timezone),
            wait=wait,
            p=prefix,
        )

    async def _unsubscribe(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        if args.strip().lower() == "all":
            if record.chat.filter == Filter():
                return Reply(lang, t(lang, "unsubscribe.nothing", p=ctx.prefix))
            await self._save(ctx.conn, record, replace(record.chat, filter=Filter()))
            return Reply(lang, t(lang, "unsubscribe.all", p=ctx.prefix))
        try:
            items = filters.parse_items([args])
        except FilterError as exc:
            return self._filter_error(lang, exc, command="unsubscribe", prefix=ctx.prefix)
        new_filter = filters.remove(record.chat.filter, items)
        if new_filter == record.chat.filter:
            tags = ", ".join(i.tag or "*" for i in items)
            text = "\n\n".join(
                [
                    t(lang, "filter.not_subscribed", tags=tags),
                    t(
                        lang,
                        "filter.now",
                        filter=describe_filter(record.chat.filter, lang=lang, prefix=ctx.prefix),
                    ),
                ]
            )
            return Reply(lang, text)
        saved, _ = await self._save(ctx.conn, record, replace(record.chat, filter=new_filter))
        return self._filter_reply(saved.chat, unknown=(), prefix=ctx.prefix)

    def _filter_error(self, lang: str, exc: FilterError, *, command: str, prefix: str) -> Reply:
        text = t(lang, f"filter.error.{exc.reason}", item=echo(exc.item), command=command, p=prefix)
        parts = [text]
        if exc.reason != filters.REASON_TOO_MANY:  # the words were fine, there are too many
            parts.append(t(lang, "filter.accepted"))
        parts.append(t(lang, "filter.nothing_changed"))
        return Reply(lang, "\n".join(parts))

    def _filter_reply(self, chat: ChatSettings, *, unknown: Sequence[str], prefix: str) -> Reply:
        lang = chat.lang
        parts = [
            t(lang, "filter.now", filter=describe_filter(chat.filter, lang=lang, prefix=prefix))
        ]
        if unknown:
            parts.append(t(lang, "filter.unknown_tags", tags=", ".join(unknown)))
        return Reply(lang, "\n\n".join(parts))

    async def _picker(
        self,
        conn: AsyncConnection,
        record: chat_store.ChatRecord,
        *,
        prefix: str,
        note: str = "",
    ) -> Reply:
        lang = record.chat.lang
        counts = await page_store.tag_counts(conn)
        if not counts:
            return Reply(lang, t(lang, "subscribe.no_tags", p=prefix))
        current = record.chat.filter
        buttons: list[Button] = []
        for tag, count in counts:
            action = TOGGLE + tag
            if len(action.encode()) > MAX_ACTION_BYTES:
                continue
            # A required or excluded tag shows as such, not as followed or unselected.
            mark = (
                PICKER_REQUIRED
                if tag in current.required
                else PICKER_EXCLUDED
                if tag in current.excluded
                else PICKER_FOLLOWED
                if tag in current.any_of
                else ""
            )
            buttons.append(Button(label=f"{mark}{tag} ({count})", action=action))
            if len(buttons) == PICKER_TAGS:
                break
        rows = tuple(tuple(buttons[i : i + 3]) for i in range(0, len(buttons), 3))
        parts = [
            t(lang, "subscribe.pick"),
            t(lang, "filter.now", filter=describe_filter(current, lang=lang, prefix=prefix)),
        ]
        if current.required or current.excluded:
            parts[0] += "\n" + t(lang, "subscribe.pick_marks", p=prefix)
        if note:
            parts.insert(0, note)
        return Reply(lang, "\n\n".join(parts), buttons=rows)

    async def _toggle(
        self, conn: AsyncConnection, record: chat_store.ChatRecord, tag: str, *, prefix: str
    ) -> Reply:
        try:
            items = filters.parse_items([tag])
        except FilterError:
            return await self._picker(conn, record, prefix=prefix)
        current = record.chat.filter
        tag = items[0].tag
        if tag in current.required or tag in current.excluded:
            # A press toggles "any of"; a required or excluded tag is changed by a command,
            # so the press changes nothing and says how.
            required = tag in current.required
            key = "subscribe.pick_required" if required else "subscribe.pick_excluded"
            note = t(record.chat.lang, key, tag=tag, p=prefix)
            return await self._picker(conn, record, prefix=prefix, note=note)
        try:
            new_filter = (
                filters.remove(current, items)
                if tag in current.any_of
                else filters.add(current, items)
            )
        except FilterError as exc:
            return self._filter_error(record.chat.lang, exc, command="subscribe", prefix=prefix)
        after = replace(record.chat, filter=new_filter)
        if after.state == ChatState.INACTIVE:
            after = replace(after, state=ChatState.ACTIVE)
        saved = await chat_store.save(conn, before=record, after=after)
        reply = await self._picker(conn, saved, prefix=prefix)
        if current.is_empty and not saved.chat.filter.is_empty:  # as a typed `subscribe` says
            first = await self._first_digest_note(conn, saved, prefix=prefix)
            if first:
                reply = replace(reply, text=f"{reply.text}\n\n{first}")
        return reply

    async def _tags(self, record: chat_store.ChatRecord, _args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        counts = await page_store.tag_counts(ctx.conn)
        if not counts:
            return Reply(lang, t(lang, "tags.none"))
        shown = [(clean(tag), count) for tag, count in counts[:TAGS_SHOWN]]
        listing = ", ".join(f"{tag} ({count})" for tag, count in shown if tag)
        text = f"{t(lang, 'tags.header')}\n{listing}"
        if len(counts) > TAGS_SHOWN:
            text += "\n" + tn(lang, "tags.more", len(counts) - TAGS_SHOWN)
        return Reply(lang, text)

    def _schedule_reply(self, chat: ChatSettings, text: str, *, prefix: str) -> Reply:
        """A reply that says when digests come, and, for a chat whose filter lets nothing
        through, that none will come until it follows a tag."""
        lang = chat.lang
        if chat.filter.is_empty:
            text += "\n" + t(lang, "cmd.no_digest_yet", p=prefix)
        return Reply(lang, text)

    async def _mode(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        if not args.strip():
            mode_name = t(lang, f"cmd.mode.{record.chat.mode.value}")
            return Reply(lang, t(lang, "mode.current", mode=mode_name, p=ctx.prefix))
        if args.split()[0].lower() == Mode.WEEKLY.value:
            return await self._weekly(record, args, ctx)
        try:
            mode = Mode(args.strip().lower())
        except ValueError:
            return Reply(lang, t(lang, "mode.usage", value=echo(args), p=ctx.prefix))
        chat = (await self._save(ctx.conn, record, replace(record.chat, mode=mode)))[0].chat
        return self._schedule_reply(
            chat,
            t(
                lang,
                f"mode.set.{mode.value}",
                time=chat.digest_time.strftime("%H:%M"),
                timezone=zone_label(chat.timezone),
            ),
            prefix=ctx.prefix,
        )

    async def _time(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        chat = record.chat
        if not args.strip():
            at_now = chat.digest_time.strftime("%H:%M")
            return Reply(
                lang,
                t(
                    lang,
                    "time.current",
                    time=at_now,
                    timezone=zone_label(chat.timezone),
                    p=ctx.prefix,
                ),
            )
        try:
            at = parse_hhmm(args)
        except ValueError:
            return Reply(lang, t(lang, "time.usage", value=echo(args), p=ctx.prefix))
        chat = (await self._save(ctx.conn, record, replace(record.chat, digest_time=at)))[0].chat
        return self._schedule_reply(
            chat,
            t(lang, "time.set", time=at.strftime("%H:%M"), timezone=zone_label(chat.timezone)),
            prefix=ctx.prefix,
        )

    async def _timezone(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        if not args.strip():
            current = record.chat.timezone
            return Reply(
                lang, t(lang, "timezone.current", timezone=zone_label(current), p=ctx.prefix)
            )
        zone = find_timezone(args)
        candidates = schedule.zone_candidates(args)
        if zone is None and candidates:
            text = t(lang, "timezone.ambiguous", zone=echo(args), candidates=", ".join(candidates))
            return Reply(lang, text)
        if zone is None:
            return Reply(lang, t(lang, "timezone.unknown", zone=echo(args)))
        chat = (await self._save(ctx.conn, record, replace(record.chat, timezone=zone)))[0].chat
        return self._schedule_reply(
            chat,
            t(
                lang,
                "timezone.set",
                timezone=zone_label(zone),
                time=chat.digest_time.strftime("%H:%M"),
            ),
            prefix=ctx.prefix,
        )

    async def _lang(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        choice = args.strip().lower()
        lang = record.chat.lang
        if not choice:
            return Reply(lang, t(lang, "lang.current", p=ctx.prefix))
        if choice not in LANGUAGES:
            return Reply(lang, t(lang, "lang.usage", value=echo(args), p=ctx.prefix))
        await self._save(ctx.conn, record, replace(record.chat, lang=choice))
        return Reply(choice, t(choice, "lang.set"))

    async def _pause(self, record: chat_store.ChatRecord, _args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        if record.chat.state == ChatState.PAUSED:
            return Reply(lang, t(lang, "pause.already", p=ctx.prefix))
        await self._save(ctx.conn, record, replace(record.chat, state=ChatState.PAUSED))
        return Reply(lang, t(lang, "pause.done", p=ctx.prefix))

    async def _resume(self, record: chat_store.ChatRecord, _args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        if record.chat.state == ChatState.ACTIVE:
            return Reply(lang, t(lang, "resume.already"))
        await self._save(ctx.conn, record, replace(record.chat, state=ChatState.ACTIVE))
        return Reply(lang, t(lang, "resume.done"))

    async def _latest(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        count = LATEST_DEFAULT
        if args.strip():
            try:
                count = int(args.strip())
            except ValueError:
                return Reply(lang, t(lang, "latest.usage", p=ctx.prefix))
            if not 1 <= count <= LATEST_MAX:
                return Reply(lang, t(lang, "latest.usage", p=ctx.prefix))
        chat_filter = record.chat.filter
        if chat_filter.is_empty:
            return Reply(lang, t(lang, "latest.no_filter", p=ctx.prefix))
        items = await self._newest_matching(ctx.conn, chat_filter, count)
        if not items:
            return Reply(lang, t(lang, "latest.none"))
        # In the order of a digest: the chat's ranking, then more matched tags, then newest.
        items.sort(key=lambda item: -len(item.matched))  # stable: newest first among equals
        weights = await feedback_store.weights_of(ctx.conn, chat_pk=record.pk)
        items = [items[i] for i in ranking.order([i.page.tags for i in items], weights)]
        return Reply(lang, tn(lang, "latest.header", len(items)), items=tuple(items))

    async def _newest_matching(
        self, conn: AsyncConnection, chat_filter: Filter, count: int
    ) -> list[DigestItem]:
        """The ``count`` newest present pages ``chat_filter`` matches, newest first.

        Pages are read in rounds, newest first: :data:`LATEST_SCAN_FACTOR` per page wanted,
        then twice as many each round, so a common filter costs one small read and a rare
        one a few; only a filter that matches almost nothing reads the whole wiki.
        """
        found: list[DigestItem] = []
        seen: set[int] = set()
        limit = count * LATEST_SCAN_FACTOR
        while True:
            ids = await page_store.newest_page_ids(conn, limit=limit)
            fresh = [i for i in ids if i not in seen]
            seen.update(fresh)
            loaded = await page_store.load_pages(conn, fresh) if fresh else {}
            for page_id in fresh:
                page = loaded.get(page_id)
                if page is not None and filters.matches(chat_filter, page.tags):
                    matched = filters.matched_tags(chat_filter, page.tags)
                    found.append(DigestItem(page=page, matched=matched, page_id=page_id))
                    if len(found) == count:
                        return found
            if len(ids) < limit:
                return found
            limit *= 2

    # Digest quality: weekly mode, quiet hours, limit, feedback, why ---------------------

    async def _weekly(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        words = args.split()
        if not words or len(words) > 2:
            return Reply(lang, t(lang, "digestq.mode.usage", p=ctx.prefix))
        day = parse_weekday(words[1]) if len(words) == 2 else 0
        if day is None:
            return Reply(lang, t(lang, "digestq.weekday.usage", value=echo(words[1]), p=ctx.prefix))
        after = replace(record.chat, mode=Mode.WEEKLY, weekday=day)
        chat = (await self._save(ctx.conn, record, after))[0].chat
        return self._schedule_reply(
            chat,
            t(
                lang,
                "digestq.mode.weekly",
                day=weekday_name(lang, day),
                time=chat.digest_time.strftime("%H:%M"),
                timezone=zone_label(chat.timezone),
            ),
            prefix=ctx.prefix,
        )

    async def _limit(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        word = args.strip().lower()
        if not word:
            off = record.chat.limit is None
            key = "digestq.limit.current_off" if off else "digestq.limit.current"
            return Reply(lang, t(lang, key, count=record.chat.limit, p=ctx.prefix, most=LIMIT_MAX))
        if word == "off":
            await self._save(ctx.conn, record, replace(record.chat, limit=None))
            return Reply(lang, t(lang, "digestq.limit.off"))
        if not (word.isascii() and word.isdigit() and 1 <= int(word) <= LIMIT_MAX):
            return Reply(lang, t(lang, "digestq.limit.usage", p=ctx.prefix, most=LIMIT_MAX))
        count = int(word)
        await self._save(ctx.conn, record, replace(record.chat, limit=count))
        return Reply(lang, t(lang, "digestq.limit.set", count=count, p=ctx.prefix))

    async def _quiet(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        if not args.strip():
            current = record.chat.quiet
            if current is None:
                return Reply(lang, t(lang, "digestq.quiet.current_off", p=ctx.prefix))
            zone = zone_label(record.chat.timezone)
            text = t(lang, "digestq.quiet.current", quiet=str(current), timezone=zone, p=ctx.prefix)
            return Reply(lang, text)
        if args.strip().lower() == "off":
            await self._save(ctx.conn, record, replace(record.chat, quiet=None))
            return Reply(lang, t(lang, "digestq.quiet.off"))
        quiet = parse_quiet(args)
        if quiet is None:
            return Reply(lang, t(lang, "digestq.quiet.usage", p=ctx.prefix))
        chat = (await self._save(ctx.conn, record, replace(record.chat, quiet=quiet)))[0].chat
        return Reply(
            lang, t(lang, "digestq.quiet.set", quiet=str(quiet), timezone=zone_label(chat.timezone))
        )

    async def _feedback(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        word = args.strip().lower()
        if word == "reset":
            buttons = (
                Button(t(lang, "digestq.feedback.reset_yes"), FEEDBACK_RESET + "yes"),
                Button(t(lang, "digestq.feedback.reset_no"), FEEDBACK_RESET + "no"),
            )
            return Reply(lang, t(lang, "digestq.feedback.reset_ask"), buttons=(buttons,))
        if word:
            return Reply(lang, t(lang, "digestq.feedback.usage", p=ctx.prefix))
        found = await feedback_store.weights_of(ctx.conn, chat_pk=record.pk)
        # Only weights that show as non-zero: votes that cancel out leave "-0.0" otherwise.
        shown = {tag: w for tag, w in found.items() if round(abs(w), 1) >= FEEDBACK_SHOWN_MIN}
        liked, disliked = ranking.top_tags(shown, count=FEEDBACK_TOP)
        lines = [t(lang, "digestq.feedback.header")]
        if not liked and not disliked:
            if await feedback_store.count(ctx.conn, chat_pk=record.pk):
                lines.append(t(lang, "digestq.feedback.cancelled"))
            else:
                lines.append(t(lang, "digestq.feedback.none"))
        if liked:
            lines.append(t(lang, "digestq.feedback.liked", tags=_weights_text(liked)))
        if disliked:
            lines.append(t(lang, "digestq.feedback.disliked", tags=_weights_text(disliked)))
        lines.append(t(lang, "digestq.feedback.rule", p=ctx.prefix))
        return Reply(lang, "\n".join(lines))

    async def _feedback_reset(self, caller: Caller, action: str, *, prefix: str) -> Reply:
        choice = action.removeprefix(FEEDBACK_RESET)
        if choice == "yes" and not await self._may_manage(caller):
            return await self._in_chat(caller, _answer("cmd.group_admins_only"), write=False)

        async def body(conn: AsyncConnection, record: chat_store.ChatRecord) -> Reply:
            lang = record.chat.lang
            if choice != "yes":
                return Reply(lang, t(lang, "digestq.feedback.reset_kept"))
            gone = await feedback_store.reset(conn, chat_pk=record.pk)
            if not gone:  # a second press, or a chat without votes
                return Reply(lang, t(lang, "digestq.feedback.reset_empty"))
            return Reply(lang, t(lang, "digestq.feedback.reset_done", count=gone, p=prefix))

        return await self._in_chat(caller, body, write=choice == "yes")

    async def _vote(self, caller: Caller, action: str) -> Toast:
        parsed = votes.parse(action)
        if parsed is None or not caller.user_id:
            record = await self._in_chat(caller, _record, write=False)
            return Toast(record.chat.lang, t(record.chat.lang, "digestq.vote.invalid"))
        page_id, up = parsed

        async def body(conn: AsyncConnection, record: chat_store.ChatRecord) -> Toast:
            lang = record.chat.lang
            now = await feedback_store.press(
                conn,
                chat_pk=record.pk,
                page_id=page_id,
                user_id=caller.user_id,
                value=ranking.UP if up else ranking.DOWN,
            )
            if now is None:
                return Toast(lang, t(lang, "digestq.vote.gone"))
            key = {ranking.UP: "up", ranking.DOWN: "down"}.get(now, "undone")
            return Toast(lang, t(lang, f"digestq.vote.{key}"))

        return await self._in_chat(caller, body, write=True)

    async def _why(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        return await why.answer(ctx.conn, record, args, prefix=ctx.prefix)

    async def _digest(self, caller: Caller, *, prefix: str) -> Reply:
        record = await self._in_chat(caller, _record, write=False)
        lang = record.chat.lang
        if record.chat.state != ChatState.ACTIVE:
            return Reply(lang, t(lang, "digest.paused", p=prefix))
        if self._digests is None:
            return Reply(lang, t(lang, "digest.unavailable"))
        if record.chat.filter.is_empty:
            return Reply(lang, t(lang, "digest.no_filter", p=prefix))
        chat = record.chat
        # Pages go in one digest, cut at the limit, unless an instant chat that was
        # welcomed already gets them one message each (as the planner decides).
        async with self._reader.connect() as conn:
            one_digest = chat.mode != Mode.INSTANT or not await chat_store.had_pages(
                conn, record.pk
            )
        # Outside the chat's transaction: planning opens its own, which writes.
        count = await self._digests.send_now(record.pk)
        if count == 0:
            return Reply(lang, t(lang, "digest.nothing"))
        if one_digest and chat.limit is not None and count > chat.limit:
            text = t(
                lang,
                "digest.queued_limited",
                shown=chat.limit,
                count=count,
                rest=count - chat.limit,
                p=prefix,
            )
            return Reply(lang, text)
        return Reply(lang, tn(lang, "digest.queued", count))

    # Destinations -----------------------------------------------------------------------

    async def _feed(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        """``feed``: the chat's private feed URL, shown once (only its hash is stored);
        ``feed reset``: a new one, and the old one answers 404."""
        lang = record.chat.lang
        choice = args.strip().lower()
        if choice not in ("", "reset"):
            return Reply(lang, t(lang, "dest.feed.usage", p=ctx.prefix))
        if self._public_base_url is None:
            return Reply(lang, t(lang, "dest.feed.no_base"))
        had = await feed_store.has_feed(ctx.conn, record.pk)
        if had and not choice:
            return Reply(lang, t(lang, "dest.feed.exists", p=ctx.prefix))
        token = await feed_store.issue(ctx.conn, chat_pk=record.pk)
        url = feeds.feed_url(self._public_base_url, token)
        parts = [t(lang, "dest.feed.reset" if had else "dest.feed.new", url=url, p=ctx.prefix)]
        if record.chat.filter.is_empty:
            parts.append(t(lang, "dest.feed.empty_filter", p=ctx.prefix))
        return Reply(lang, "\n\n".join(parts))

    async def _export(self, record: chat_store.ChatRecord, _args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        line = transfer.export_line(record.chat)
        return Reply(lang, t(lang, "dest.export.line", p=ctx.prefix) + "\n" + line)

    async def _import(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        """``import LINE``: every setting of the line, checked first, in this transaction."""
        lang = record.chat.lang
        if not args.strip():
            return Reply(lang, t(lang, "dest.import.usage", p=ctx.prefix))
        try:
            after = transfer.import_line(record.chat, args)
        except TransferError as exc:
            text = "\n".join(
                [transfer_error_text(lang, exc), t(lang, "dest.import.nothing_changed")]
            )
            return Reply(lang, text)
        saved, _ = await self._save(ctx.conn, record, after)
        lang = saved.chat.lang
        done = t(lang, "dest.import.done")
        shown = self._describe_settings(saved, prefix=ctx.prefix)
        return Reply(lang, done + "\n\n" + shown)

    async def _alerts(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        """``alerts on|off``: an admin's operator alerts, in their private chat."""
        lang = record.chat.lang
        caller = ctx.caller
        if self._admin is None or not self._admin.is_admin(caller):
            await admin_store.audit(
                ctx.conn,
                actor=f"{caller.platform.value}:{caller.user_id}",
                chat=record.chat.address,
                action="alerts.refused",
                allowed=False,
            )
            return Reply(lang, t(lang, "cmd.admins_only"))
        admin_id = self._admin.alert_admin_id(caller)
        if admin_id is None:
            # Alerts go to the deployment's admins on Telegram and Slack; saying "on" to
            # anyone else would confirm what never happens.
            reason = "workspace" if caller.platform == Platform.SLACK else "console"
            await admin_store.audit(
                ctx.conn,
                actor=f"{caller.platform.value}:{caller.user_id}",
                chat=record.chat.address,
                action="alerts.refused",
                allowed=False,
            )
            return Reply(lang, t(lang, f"dest.alerts.none_for_{reason}"))
        if caller.chat_kind != ChatKind.PRIVATE:
            return Reply(lang, t(lang, "dest.alerts.private_only", p=ctx.prefix))
        choice = args.strip().lower()
        if choice not in ("on", "off"):
            choices = await alert_store.admin_choices(ctx.conn)
            current = choices.get((caller.platform.value, admin_id))
            state = "on" if current is None or current.enabled else "off"
            text = t(
                lang, "dest.alerts.usage", p=ctx.prefix, state=t(lang, f"dest.alerts.state.{state}")
            )
            return Reply(lang, text)
        await alert_store.choose(
            ctx.conn,
            platform=caller.platform.value,
            user_id=admin_id,
            chat_pk=record.pk,
            enabled=choice == "on",
            now=page_store.utcnow(),
        )
        return Reply(lang, t(lang, f"dest.alerts.{choice}", p=ctx.prefix))


@dataclass(frozen=True, slots=True)
class _Context:
    caller: Caller
    prefix: str
    conn: AsyncConnection  # the transaction the chat was read in


async def _record(_conn: AsyncConnection, record: chat_store.ChatRecord) -> chat_store.ChatRecord:
    return record


def _answer(
    key: str, **params: object
) -> Callable[[AsyncConnection, chat_store.ChatRecord], Awaitable[Reply]]:
    """A reply that needs nothing but the chat's language."""

    async def answer(_conn: AsyncConnection, record: chat_store.ChatRecord) -> Reply:
        lang = record.chat.lang
        return Reply(lang, t(lang, key, **params))

    return answer


def help_text(lang: str, *, prefix: str, bot_admin: bool) -> str:
    """Every command the caller may use, one line each, in the table's order; the bot's
    admins' commands under their own heading; then how to learn more of one."""
    lines = [t(lang, "cmd.help")]
    for command in command_table.for_caller(bot_admin=bot_admin):
        admins = command.audience == command_table.Audience.BOT_ADMINS
        if admins and t(lang, "cmd.help_admin") not in lines:
            lines.append(t(lang, "cmd.help_admin"))
        lines.append(t(lang, command.line_key, p=prefix))
    lines.append(t(lang, "cmd.help_more", p=prefix))
    return "\n".join(lines)


def describe_filter(f: Filter, *, lang: str, prefix: str = "/") -> str:
    """A filter in words, saying exactly what it lets through.

    ``any of rl, reasoning; must have post-training; never robotics``; with ``*``: ``every
    page, except robotics`` or ``every page that has post-training``; a filter of excluded
    tags only lets nothing through, and says so.
    """
    if f.is_empty and not f.excluded:
        return t(lang, "filter.none", p=prefix)
    if f.is_empty:
        return t(lang, "filter.only_excluded", tags=", ".join(sorted(f.excluded)))
    if f.everything:
        if f.required:
            head = t(lang, "filter.everything_required", tags=", ".join(sorted(f.required)))
        else:
            head = t(lang, "filter.everything")
        parts = [head]
        if f.any_of:
            # Any-of tags let nothing more through with *; they rank their pages first.
            parts.append(t(lang, "filter.first", tags=", ".join(sorted(f.any_of))))
        if f.excluded:
            parts.append(t(lang, "filter.except", tags=", ".join(sorted(f.excluded))))
        if len(parts) == 1:
            return head
        # English goes on after a comma; Korean adds the rest in brackets ("모든 페이지(rl
        # 태그가 있는 페이지 우선, robotics 태그가 있는 페이지 제외)").
        return t(lang, "filter.everything_more", head=head, more=", ".join(parts[1:]))
    # Clauses of one sentence (Korean: "rl 태그가 있고, robotics 태그는 없는 페이지"); each
    # has a form that ends the sentence and one that goes on (``_and``).
    clauses = []
    if f.any_of:
        clauses.append(("filter.any_one" if len(f.any_of) == 1 else "filter.any", f.any_of))
    if f.required:
        clauses.append(("filter.required", f.required))
    if f.excluded:
        clauses.append(("filter.excluded", f.excluded))
    parts = [
        t(lang, key if i == len(clauses) - 1 else f"{key}_and", tags=", ".join(sorted(tags)))
        for i, (key, tags) in enumerate(clauses)
    ]
    return t(lang, "filter.sentence", parts=t(lang, "filter.join").join(parts))


def transfer_error_text(lang: str, exc: TransferError) -> str:
    """What is wrong with an ``import`` line, in words."""
    if exc.reason == transfer.REASON_VALUE:
        key = f"dest.import.bad.{exc.field}"
        if has_message(key):
            accepted = ", ".join(m.value for m in Mode)
            return t(lang, key, value=exc.value, accepted=accepted)
    fields = ", ".join(spec.name for spec in transfer.FIELDS)
    return t(
        lang, f"dest.import.error.{exc.reason}", field=exc.field, value=exc.value, fields=fields
    )


def weekday_name(lang: str, day: int) -> str:
    return t(lang, f"digestq.weekday.{WEEKDAYS[day]}")


def _weights_text(found: Sequence[tuple[str, float]]) -> str:
    return ", ".join(f"{tag} {weight:+.1f}" for tag, weight in found)


def describe_schedule(record: chat_store.ChatRecord) -> str:
    """The lines `settings` adds below the next digest: weekday, quiet hours, limit, and
    pages held by the quiet hours."""
    chat = record.chat
    lang = chat.lang
    zone = ZoneInfo(chat.timezone)
    lines = []
    if chat.mode == Mode.WEEKLY:
        lines.append(t(lang, "digestq.settings.weekly", day=weekday_name(lang, chat.weekday)))
    if chat.quiet is not None:
        lines.append(t(lang, "digestq.settings.quiet", quiet=str(chat.quiet)))
    else:
        lines.append(t(lang, "digestq.settings.quiet_off"))
    if chat.limit is not None:
        lines.append(t(lang, "digestq.settings.limit", count=chat.limit))
    else:
        lines.append(t(lang, "digestq.settings.limit_off"))
    if chat.mode == Mode.INSTANT and record.held_until is not None:
        until = record.held_until.replace(tzinfo=dt.UTC).astimezone(zone)
        lines.append(t(lang, "digestq.settings.held", when=until.strftime("%H:%M")))
    return "\n".join(lines)


WEEKDAYS_KO = "월화수목금토일"


def parse_weekday(text: str) -> int | None:
    """``mon``..``sun`` (or the whole English name, any case), or the Korean ``수`` /
    ``수요일`` -> 0..6."""
    word = text.strip().lower()
    for day, name in enumerate(WEEKDAYS):
        full = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")[day]
        if word in (name, full):
            return day
    korean = word.removesuffix("요일")
    if len(korean) == 1 and korean in WEEKDAYS_KO:
        return WEEKDAYS_KO.index(korean)
    return None


def parse_quiet(text: str) -> QuietHours | None:
    """``22:00-07:00`` (spaces around the dash allowed, an en dash too) -> QuietHours;
    None when malformed or empty (start equal to end)."""
    start, sep, end = text.replace("–", "-").partition("-")
    if not sep:
        return None
    try:
        quiet = QuietHours(parse_hhmm(start.strip()), parse_hhmm(end.strip()))
    except ValueError:
        return None
    return quiet if quiet.start != quiet.end else None
