"""When digests come: ``mode``, ``time``, ``timezone``, ``quiet``, ``pause``, ``resume``."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from zoneinfo import ZoneInfo

from bot.commands.base import Context, echo, save
from bot.commands.registry import MANAGERS, command
from bot.i18n import t
from bot.models import (
    ChatSettings,
    ChatState,
    Mode,
    QuietHours,
    Reply,
)
from bot.render.text import format_date
from bot.rules import schedule
from bot.rules.schedule import zone_label
from bot.settings import parse_hhmm
from bot.store import chats as chat_store

__all__ = [
    "WEEKDAYS",
    "WEEKDAYS_KO",
    "describe_next",
    "describe_schedule",
    "find_timezone",
    "format_wait",
    "mode_command",
    "parse_quiet",
    "parse_weekday",
    "pause_command",
    "quiet_command",
    "resume_command",
    "time_command",
    "timezone_command",
    "weekday_name",
]

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
WEEKDAYS_KO = "월화수목금토일"


def _schedule_reply(chat: ChatSettings, key: str, *, prefix: str, **fields: object) -> Reply:
    """The catalogue text ``key`` that says when digests come, given the chat's digest
    ``time`` and ``timezone`` (and ``fields``), and, for a chat whose filter lets
    nothing through, that none will come until it follows a tag."""
    lang = chat.lang
    text = t(
        lang,
        key,
        time=chat.digest_time.strftime("%H:%M"),
        timezone=zone_label(chat.timezone),
        **fields,
    )
    if chat.filter.is_empty:
        text += "\n" + t(lang, "cmd.no_digest_yet", p=prefix)
    return Reply(lang, text)


@command("mode", order=70, audience=MANAGERS, writes=True)
async def mode_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    if not args.strip():
        mode_name = t(lang, f"cmd.mode.{record.chat.mode.value}")
        return Reply(lang, t(lang, "mode.current", mode=mode_name, p=ctx.prefix))
    if args.split()[0].lower() == Mode.WEEKLY.value:
        return await _weekly(record, args, ctx)
    try:
        mode = Mode(args.strip().lower())
    except ValueError:
        return Reply(lang, t(lang, "mode.usage", value=echo(args), p=ctx.prefix))
    chat = (await save(ctx.conn, record, replace(record.chat, mode=mode)))[0].chat
    return _schedule_reply(chat, f"mode.set.{mode.value}", prefix=ctx.prefix)


@command("time", order=80, audience=MANAGERS, writes=True)
async def time_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
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
    chat = (await save(ctx.conn, record, replace(record.chat, digest_time=at)))[0].chat
    return _schedule_reply(chat, "time.set", prefix=ctx.prefix)


@command("timezone", order=90, audience=MANAGERS, writes=True)
async def timezone_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    if not args.strip():
        current = record.chat.timezone
        return Reply(lang, t(lang, "timezone.current", timezone=zone_label(current), p=ctx.prefix))
    zone = find_timezone(args)
    candidates = schedule.zone_candidates(args)
    if zone is None and candidates:
        text = t(lang, "timezone.ambiguous", zone=echo(args), candidates=", ".join(candidates))
        return Reply(lang, text)
    if zone is None:
        return Reply(lang, t(lang, "timezone.unknown", zone=echo(args)))
    chat = (await save(ctx.conn, record, replace(record.chat, timezone=zone)))[0].chat
    return _schedule_reply(chat, "timezone.set", prefix=ctx.prefix)


@command("pause", order=110, audience=MANAGERS, writes=True)
async def pause_command(record: chat_store.ChatRecord, _args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    if record.chat.state == ChatState.PAUSED:
        return Reply(lang, t(lang, "pause.already", p=ctx.prefix))
    await save(ctx.conn, record, replace(record.chat, state=ChatState.PAUSED))
    return Reply(lang, t(lang, "pause.done", p=ctx.prefix))


@command("resume", order=120, audience=MANAGERS, writes=True)
async def resume_command(record: chat_store.ChatRecord, _args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    if record.chat.state == ChatState.ACTIVE:
        return Reply(lang, t(lang, "resume.already"))
    await save(ctx.conn, record, replace(record.chat, state=ChatState.ACTIVE))
    return Reply(lang, t(lang, "resume.done"))


async def _weekly(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    words = args.split()
    if not words or len(words) > 2:
        return Reply(lang, t(lang, "digestq.mode.usage", p=ctx.prefix))
    day = parse_weekday(words[1]) if len(words) == 2 else 0
    if day is None:
        return Reply(lang, t(lang, "digestq.weekday.usage", value=echo(words[1]), p=ctx.prefix))
    after = replace(record.chat, mode=Mode.WEEKLY, weekday=day)
    chat = (await save(ctx.conn, record, after))[0].chat
    return _schedule_reply(
        chat, "digestq.mode.weekly", prefix=ctx.prefix, day=weekday_name(lang, day)
    )


@command("quiet", order=160, audience=MANAGERS, writes=True)
async def quiet_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    if not args.strip():
        current = record.chat.quiet
        if current is None:
            return Reply(lang, t(lang, "digestq.quiet.current_off", p=ctx.prefix))
        zone = zone_label(record.chat.timezone)
        text = t(lang, "digestq.quiet.current", quiet=str(current), timezone=zone, p=ctx.prefix)
        return Reply(lang, text)
    if args.strip().lower() == "off":
        await save(ctx.conn, record, replace(record.chat, quiet=None))
        return Reply(lang, t(lang, "digestq.quiet.off"))
    quiet = parse_quiet(args)
    if quiet is None:
        return Reply(lang, t(lang, "digestq.quiet.usage", p=ctx.prefix))
    chat = (await save(ctx.conn, record, replace(record.chat, quiet=quiet)))[0].chat
    return Reply(
        lang, t(lang, "digestq.quiet.set", quiet=str(quiet), timezone=zone_label(chat.timezone))
    )


def find_timezone(text: str) -> str | None:
    """The IANA zone ``text`` names: a zone in any case, a common abbreviation or an
    offset (``KST``, ``UTC+9``; see :func:`bot.rules.schedule.resolve_zone`)."""
    return schedule.resolve_zone(text)


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
        due = schedule.next_digest_for(chat, now=now)
        if due is None:
            return None
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


def weekday_name(lang: str, day: int) -> str:
    return t(lang, f"digestq.weekday.{WEEKDAYS[day]}")


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
