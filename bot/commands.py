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

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot import filters, metrics, schedule
from bot.errors import FilterError
from bot.i18n import clean, t, tn
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
    Reply,
)
from bot.render.text import format_date
from bot.settings import parse_hhmm
from bot.store import chats as chat_store
from bot.store import pages as page_store
from bot.store.engine import reader
from bot.store.pages import utcnow

log = logging.getLogger("bot.commands")

T = TypeVar("T")

LATEST_DEFAULT = 5
LATEST_MAX = 20
# `latest` reads this many newest pages per page it shows, then twice as many each round,
# until enough match: most filters match within the first round.
LATEST_SCAN_FACTOR = 4
# Inline keyboard of `subscribe` with no argument: enough to choose from, few enough to read.
PICKER_TAGS = 12
# Telegram callback_data is at most 64 bytes; "tog:" + a 64-character tag could exceed it.
MAX_ACTION_BYTES = 64
MAX_COMMAND_CHARS = 4000
# Commands that change the chat: in a group only its administrators may use them.
MUTATING = frozenset(
    {"subscribe", "unsubscribe", "mode", "time", "timezone", "lang", "pause", "resume", "digest"}
)
# Commands whose handler writes the chat, in the same transaction that reads it.
WRITING = MUTATING - {"digest"}
TOGGLE = "tog:"
ADMIN_COMMANDS = frozenset({"broadcast", "stats"})
KNOWN_COMMANDS = MUTATING | ADMIN_COMMANDS | {"start", "help", "tags", "settings", "latest"}
# `tags` lists this many of the most used tags, then says how many more there are: a wiki
# with thousands of tags would otherwise fill dozens of messages.
TAGS_SHOWN = 100
# Commands in the order `help` lists them; `help COMMAND` explains one of them.
COMMAND_ORDER = (
    "start",
    "help",
    "subscribe",
    "unsubscribe",
    "tags",
    "settings",
    "mode",
    "time",
    "timezone",
    "lang",
    "pause",
    "resume",
    "latest",
    "digest",
    "broadcast",
    "stats",
)
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


class DigestPort(Protocol):
    """Plans a chat's pending digest now; returns how many pages it queued (0: none)."""

    async def send_now(self, chat_pk: int) -> int: ...


class AdminPort(Protocol):
    """Admin commands (broadcast, stats), served by the admin module."""

    def is_admin(self, caller: Caller) -> bool: ...

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
    """``3 h 20 min`` / ``3시간 20분``."""
    if hours:
        return t(lang, "wait.hours_minutes", hours=hours, minutes=minutes)
    return t(lang, "wait.minutes", minutes=minutes)


def describe_next(
    chat: ChatSettings, *, next_at: dt.datetime | None, now: dt.datetime
) -> tuple[str, str] | None:
    """When a daily chat's next digest comes, in its zone (``today at 09:00``), and how long
    until then (``5 h 12 min``); None in instant mode."""
    if chat.mode != Mode.DAILY:
        return None
    now = now.replace(tzinfo=dt.UTC) if now.tzinfo is None else now
    if next_at is None or next_at.replace(tzinfo=dt.UTC) <= now:
        due = schedule.next_due(at=chat.digest_time, timezone=chat.timezone, after=now)
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
    ) -> None:
        self._engine = engine
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
            return await self._in_chat(caller, _answer("cmd.group_admins_only"), write=False)
        if handler is None:
            return await self._digest(caller, prefix=prefix)

        async def run(conn: AsyncConnection, record: chat_store.ChatRecord) -> Reply:
            return await handler(record, args, _Context(caller=caller, prefix=prefix, conn=conn))

        return await self._in_chat(caller, run, write=name in WRITING)

    async def handle_action(
        self, caller: Caller, action: str, *, prefix: str = "/"
    ) -> Reply | None:
        """A button press. Returns the updated message, or None when nothing should change."""
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
        if not write:
            async with self._reader.connect() as conn:
                record = await chat_store.get(
                    conn, platform=caller.platform, chat_id=caller.chat_id
                )
                if record is not None:
                    return await body(conn, record)
        for attempt in (1, 2):
            try:
                async with self._engine.begin() as conn:
                    record = await chat_store.ensure(
                        conn, defaults=self._new_chat(caller), title=caller.chat_title
                    )
                    return await body(conn, record)
            except IntegrityError:
                # Another command of the same new chat created it first (PostgreSQL runs
                # both at once): all of this was rolled back; once more, on that chat.
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _new_chat(self, caller: Caller) -> ChatSettings:
        lang = self._defaults.lang
        if caller.language_code and caller.language_code.lower().startswith("ko"):
            lang = "ko"
        return ChatSettings(
            platform=caller.platform,
            chat_id=caller.chat_id,
            kind=caller.chat_kind,
            digest_time=self._defaults.digest_time,
            timezone=self._defaults.timezone,
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
    ) -> tuple[ChatSettings, tuple[str, ...]]:
        """Store ``after`` (nothing is written when it equals the chat as read) and find which
        of ``check_tags`` no present page carries."""
        chat = record.chat
        if after != record.chat:
            chat = (await chat_store.save(conn, before=record, after=after)).chat
        known = await page_store.known_tags(conn, check_tags) if check_tags else set()
        return chat, tuple(dict.fromkeys(tag for tag in check_tags if tag not in known))

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
        parts = [t(lang, "cmd.greeting"), t(lang, "cmd.help", p=ctx.prefix)]
        if self._admin is not None and self._admin.is_admin(ctx.caller):
            parts.append(t(lang, "cmd.help_admin", p=ctx.prefix))
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
            timezone=chat.timezone,
            lang=t(lang, f"cmd.lang.{chat.lang}"),
            state=t(lang, f"cmd.state.{chat.state.value}"),
        )
        upcoming = describe_next(chat, next_at=record.next_digest_at, now=utcnow())
        if upcoming is not None and chat.state == ChatState.ACTIVE:
            when, wait = upcoming
            text += "\n" + t(
                lang, "cmd.settings.next", when=when, timezone=chat.timezone, wait=wait
            )
        return text

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
        saved, unknown = await self._save(
            ctx.conn, record, after, check_tags=[i.tag for i in items if i.kind != "everything"]
        )
        reply = self._filter_reply(saved, unknown=unknown, prefix=ctx.prefix)
        if record.chat.filter.is_empty and not saved.filter.is_empty:
            first = await self._first_digest_note(ctx.conn, record, saved, prefix=ctx.prefix)
            if first:
                reply = replace(reply, text=f"{reply.text}\n\n{first}")
        return reply

    async def _first_digest_note(
        self,
        conn: AsyncConnection,
        record: chat_store.ChatRecord,
        chat: ChatSettings,
        *,
        prefix: str,
    ) -> str:
        """For a chat that never had a digest: when the first one comes, and that
        ``digest`` sends it now; ``""`` for a chat that had one."""
        if await chat_store.had_pages(conn, record.pk):
            return ""
        lang = chat.lang
        upcoming = describe_next(chat, next_at=record.next_digest_at, now=utcnow())
        if upcoming is None:
            return t(lang, "subscribe.first_instant", p=prefix)
        when, wait = upcoming
        return t(
            lang, "subscribe.first_digest", when=when, timezone=chat.timezone, wait=wait, p=prefix
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
        return self._filter_reply(saved, unknown=(), prefix=ctx.prefix)

    def _filter_error(self, lang: str, exc: FilterError, *, command: str, prefix: str) -> Reply:
        text = t(
            lang, f"filter.error.{exc.reason}", item=echo(exc.item), command=command, p=prefix
        )
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
        self, conn: AsyncConnection, record: chat_store.ChatRecord, *, prefix: str
    ) -> Reply:
        lang = record.chat.lang
        counts = await page_store.tag_counts(conn)
        if not counts:
            return Reply(lang, t(lang, "subscribe.no_tags", p=prefix))
        followed = record.chat.filter.any_of | record.chat.filter.required
        buttons: list[Button] = []
        for tag, count in counts:
            action = TOGGLE + tag
            if len(action.encode()) > MAX_ACTION_BYTES:
                continue
            mark = "✅ " if tag in followed else ""
            buttons.append(Button(label=f"{mark}{tag} ({count})", action=action))
            if len(buttons) == PICKER_TAGS:
                break
        rows = tuple(tuple(buttons[i : i + 3]) for i in range(0, len(buttons), 3))
        text = "\n\n".join(
            [
                t(lang, "subscribe.pick"),
                t(
                    lang,
                    "filter.now",
                    filter=describe_filter(record.chat.filter, lang=lang, prefix=prefix),
                ),
            ]
        )
        return Reply(lang, text, buttons=rows)

    async def _toggle(
        self, conn: AsyncConnection, record: chat_store.ChatRecord, tag: str, *, prefix: str
    ) -> Reply:
        try:
            items = filters.parse_items([tag])
        except FilterError:
            return await self._picker(conn, record, prefix=prefix)
        current = record.chat.filter
        followed = current.any_of | current.required
        try:
            new_filter = (
                filters.remove(current, items)
                if items[0].tag in followed
                else filters.add(current, items)
            )
        except FilterError as exc:
            return self._filter_error(record.chat.lang, exc, command="subscribe", prefix=prefix)
        after = replace(record.chat, filter=new_filter)
        if after.state == ChatState.INACTIVE:
            after = replace(after, state=ChatState.ACTIVE)
        saved = await chat_store.save(conn, before=record, after=after)
        return await self._picker(conn, saved, prefix=prefix)

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

    async def _mode(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        if not args.strip():
            mode_name = t(lang, f"cmd.mode.{record.chat.mode.value}")
            return Reply(lang, t(lang, "mode.current", mode=mode_name, p=ctx.prefix))
        try:
            mode = Mode(args.strip().lower())
        except ValueError:
            return Reply(lang, t(lang, "mode.usage", value=echo(args), p=ctx.prefix))
        chat, _ = await self._save(ctx.conn, record, replace(record.chat, mode=mode))
        return Reply(
            lang,
            t(
                lang,
                f"mode.set.{mode.value}",
                time=chat.digest_time.strftime("%H:%M"),
                timezone=chat.timezone,
            ),
        )

    async def _time(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        chat = record.chat
        if not args.strip():
            at_now = chat.digest_time.strftime("%H:%M")
            return Reply(
                lang, t(lang, "time.current", time=at_now, timezone=chat.timezone, p=ctx.prefix)
            )
        try:
            at = parse_hhmm(args)
        except ValueError:
            return Reply(lang, t(lang, "time.usage", value=echo(args), p=ctx.prefix))
        chat, _ = await self._save(ctx.conn, record, replace(record.chat, digest_time=at))
        return Reply(lang, t(lang, "time.set", time=at.strftime("%H:%M"), timezone=chat.timezone))

    async def _timezone(self, record: chat_store.ChatRecord, args: str, ctx: _Context) -> Reply:
        lang = record.chat.lang
        if not args.strip():
            current = record.chat.timezone
            return Reply(lang, t(lang, "timezone.current", timezone=current, p=ctx.prefix))
        zone = find_timezone(args)
        if zone is None:
            return Reply(lang, t(lang, "timezone.unknown", zone=echo(args)))
        chat, _ = await self._save(ctx.conn, record, replace(record.chat, timezone=zone))
        return Reply(
            lang,
            t(lang, "timezone.set", timezone=zone, time=chat.digest_time.strftime("%H:%M")),
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
                    found.append(DigestItem(page=page, matched=matched))
                    if len(found) == count:
                        return found
            if len(ids) < limit:
                return found
            limit *= 2

    async def _digest(self, caller: Caller, *, prefix: str) -> Reply:
        record = await self._in_chat(caller, _record, write=False)
        lang = record.chat.lang
        if record.chat.state != ChatState.ACTIVE:
            return Reply(lang, t(lang, "digest.paused", p=prefix))
        if self._digests is None:
            return Reply(lang, t(lang, "digest.unavailable"))
        if record.chat.filter.is_empty:
            return Reply(lang, t(lang, "digest.no_filter", p=prefix))
        # Outside the chat's transaction: planning opens its own, which writes.
        count = await self._digests.send_now(record.pk)
        if count == 0:
            return Reply(lang, t(lang, "digest.nothing"))
        return Reply(lang, tn(lang, "digest.queued", count))


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
        return ", ".join(parts)
    parts = []
    if f.any_of:
        parts.append(t(lang, "filter.any", tags=", ".join(sorted(f.any_of))))
    if f.required:
        parts.append(t(lang, "filter.required", tags=", ".join(sorted(f.required))))
    if f.excluded:
        parts.append(t(lang, "filter.excluded", tags=", ".join(sorted(f.excluded))))
    return "; ".join(parts)
