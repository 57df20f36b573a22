"""Help and the chat's settings: ``start``, ``help``, ``settings``, ``lang``."""

from __future__ import annotations

from dataclasses import replace

from bot.commands import registry
from bot.commands.base import Context, echo, save, suggest_command
from bot.commands.registry import EVERYONE, MANAGERS, Menu, command
from bot.commands.schedule import describe_next, describe_schedule
from bot.commands.subscription import describe_filter
from bot.i18n import language_name, t
from bot.models import (
    LANGUAGES,
    ChatState,
    Reply,
)
from bot.rules.schedule import zone_label
from bot.store import chats as chat_store
from bot.util import utcnow

# Commands in the order `help` lists them (the registry's); `help COMMAND` explains one.
COMMAND_ORDER = registry.NAMES


@command("start", order=10, audience=EVERYONE, menu=Menu.NONE)
@command("help", order=20, audience=EVERYONE, menu=Menu.GROUP, usage="")
async def help_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    topic = args.strip().lstrip("/").split("@", 1)[0].lower()
    if topic:
        if topic in COMMAND_ORDER:
            return Reply(lang, t(lang, f"help.{topic}", p=ctx.prefix))
        suggestion = suggest_command(topic)
        if suggestion is not None:
            return Reply(lang, t(lang, f"help.{suggestion}", p=ctx.prefix))
        return Reply(lang, t(lang, "help.unknown", command=echo(topic), p=ctx.prefix))
    admin = ctx.ports.admin
    bot_admin = admin is not None and admin.is_admin(ctx.caller)
    parts = [t(lang, "cmd.greeting"), help_text(lang, prefix=ctx.prefix, bot_admin=bot_admin)]
    parts.append(describe_settings(record, prefix=ctx.prefix))
    return Reply(lang, "\n\n".join(parts))


def describe_settings(record: chat_store.ChatRecord, *, prefix: str) -> str:
    """The chat's settings in words, with when its next digest comes (``help``,
    ``settings``, and what ``import`` and the settings page confirm)."""
    chat = record.chat
    lang = chat.lang
    text = t(
        lang,
        "cmd.settings",
        filter=describe_filter(chat.filter, lang=lang, prefix=prefix),
        mode=t(lang, f"cmd.mode.{chat.mode.value}"),
        time=chat.digest_time.strftime("%H:%M"),
        timezone=zone_label(chat.timezone),
        lang=language_name(chat.lang, lang),
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


@command("lang", order=100, audience=MANAGERS, writes=True)
async def lang_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    choice = args.strip().lower()
    lang = record.chat.lang
    if not choice:
        return Reply(lang, t(lang, "lang.current", p=ctx.prefix))
    if choice not in LANGUAGES:
        return Reply(lang, t(lang, "lang.usage", value=echo(args), p=ctx.prefix))
    await save(ctx.conn, record, replace(record.chat, lang=choice))
    return Reply(choice, t(choice, "lang.set"))


def help_text(lang: str, *, prefix: str, bot_admin: bool) -> str:
    """Every command the caller may use, one line each, in the table's order; the bot's
    admins' commands under their own heading; then how to learn more of one."""
    lines = [t(lang, "cmd.help")]
    for declared in registry.for_caller(bot_admin=bot_admin):
        admins = declared.audience == registry.BOT_ADMINS
        if admins and t(lang, "cmd.help_admin") not in lines:
            lines.append(t(lang, "cmd.help_admin"))
        lines.append(t(lang, declared.line_key, p=prefix))
    lines.append(t(lang, "cmd.help_more", p=prefix))
    return "\n".join(lines)
