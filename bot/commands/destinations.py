"""The chat's settings elsewhere: ``feed`` (a private Atom feed), ``export``, ``import``."""

from __future__ import annotations

from bot.commands.base import Context, save
from bot.commands.help import describe_settings
from bot.commands.registry import EVERYONE, MANAGERS, command
from bot.errors import TransferError
from bot.i18n import has as has_message
from bot.i18n import t
from bot.matching import transfer
from bot.models import (
    Mode,
    Reply,
)
from bot.rules import feeds
from bot.store import chats as chat_store
from bot.store import feeds as feed_store


@command("feed", order=190, audience=MANAGERS, writes=True)
async def feed_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    """``feed``: the chat's private feed URL, shown once (only its hash is stored);
    ``feed reset``: a new one, and the old one answers 404."""
    lang = record.chat.lang
    choice = args.strip().lower()
    if choice not in ("", "reset"):
        return Reply(lang, t(lang, "dest.feed.usage", p=ctx.prefix))
    base = ctx.ports.public_base_url
    if base is None:
        return Reply(lang, t(lang, "dest.feed.no_base"))
    had = await feed_store.has_feed(ctx.conn, record.pk)
    if had and not choice:
        return Reply(lang, t(lang, "dest.feed.exists", p=ctx.prefix))
    token = await feed_store.issue(ctx.conn, chat_pk=record.pk)
    url = feeds.feed_url(base, token)
    parts = [t(lang, "dest.feed.reset" if had else "dest.feed.new", url=url, p=ctx.prefix)]
    if record.chat.filter.is_empty:
        parts.append(t(lang, "dest.feed.empty_filter", p=ctx.prefix))
    return Reply(lang, "\n\n".join(parts))


@command("export", order=200, audience=EVERYONE)
async def export_command(record: chat_store.ChatRecord, _args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    line = transfer.export_line(record.chat)
    return Reply(lang, t(lang, "dest.export.line", p=ctx.prefix) + "\n" + line)


@command("import", order=210, audience=MANAGERS, writes=True)
async def import_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    """``import LINE``: every setting of the line, checked first, in this transaction."""
    lang = record.chat.lang
    if not args.strip():
        return Reply(lang, t(lang, "dest.import.usage", p=ctx.prefix))
    try:
        after = transfer.import_line(record.chat, args)
    except TransferError as exc:
        text = "\n".join([transfer_error_text(lang, exc), t(lang, "dest.import.nothing_changed")])
        return Reply(lang, text)
    saved, _ = await save(ctx.conn, record, after)
    lang = saved.chat.lang
    done = t(lang, "dest.import.done")
    shown = describe_settings(saved, prefix=ctx.prefix)
    return Reply(lang, done + "\n\n" + shown)


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
