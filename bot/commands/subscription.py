"""Following tags: ``subscribe`` (typed, or the tag picker's buttons), ``unsubscribe``,
``tags``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncConnection

from bot.commands.base import (
    Caller,
    Context,
    Ports,
    answer,
    echo,
    may_manage,
    refusal_key,
    save,
)
from bot.commands.registry import EVERYONE, MANAGERS, Menu, action, command
from bot.commands.schedule import describe_next
from bot.errors import FilterError
from bot.i18n import clean, t, tn
from bot.models import (
    Button,
    ChatSettings,
    ChatState,
    Filter,
    Reply,
)
from bot.rules import filters
from bot.rules.schedule import zone_label
from bot.store import chats as chat_store
from bot.store import current
from bot.util import utcnow

# Inline keyboard of `subscribe` with no argument: enough to choose from, few enough to read.
PICKER_TAGS = 12
# How the tag picker marks a tag the chat follows, requires (+tag) or excludes (-tag).
PICKER_FOLLOWED = "✅ "
PICKER_REQUIRED = "➕ "
PICKER_EXCLUDED = "🚫 "
# Telegram callback_data is at most 64 bytes; "tog:" + a 64-character tag could exceed it.
MAX_ACTION_BYTES = 64
TOGGLE = "tog:"
# `tags` lists this many of the most used tags, then says how many more there are: a wiki
# with thousands of tags would otherwise fill dozens of messages.
TAGS_SHOWN = 100


@command("subscribe", order=30, audience=MANAGERS, writes=True, usage="TAG...")
async def subscribe_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    if not args:
        return await _picker(ctx.conn, record, prefix=ctx.prefix)
    try:
        items = filters.parse_items([args])
        new_filter = filters.add(record.chat.filter, items)
    except FilterError as exc:
        return _filter_error(lang, exc, command="subscribe", prefix=ctx.prefix)
    after = replace(record.chat, filter=new_filter)
    if after.state == ChatState.INACTIVE:
        after = replace(after, state=ChatState.ACTIVE)
    stored, unknown = await save(
        ctx.conn, record, after, check_tags=[i.tag for i in items if i.kind != "everything"]
    )
    saved = stored.chat
    reply = _filter_reply(saved, unknown=unknown, prefix=ctx.prefix)
    kept = filters.kept_required(record.chat.filter, items)
    if kept:  # asked for bare, still required: said, never changed silently
        notes = [t(lang, "subscribe.kept_required", tag=tag, p=ctx.prefix) for tag in kept]
        reply = replace(reply, text="\n\n".join([reply.text, *notes]))
    if record.chat.filter.is_empty and not saved.filter.is_empty:
        first = await _first_digest_note(ctx.conn, stored, prefix=ctx.prefix)
        if first:
            reply = replace(reply, text=f"{reply.text}\n\n{first}")
    return reply


async def _first_digest_note(
    conn: AsyncConnection, record: chat_store.ChatRecord, *, prefix: str
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


@command("unsubscribe", order=40, audience=MANAGERS, writes=True)
async def unsubscribe_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    if args.strip().lower() == "all":
        if record.chat.filter == Filter():
            return Reply(lang, t(lang, "unsubscribe.nothing", p=ctx.prefix))
        await save(ctx.conn, record, replace(record.chat, filter=Filter()))
        return Reply(lang, t(lang, "unsubscribe.all", p=ctx.prefix))
    try:
        items = filters.parse_items([args])
    except FilterError as exc:
        return _filter_error(lang, exc, command="unsubscribe", prefix=ctx.prefix)
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
    saved, _ = await save(ctx.conn, record, replace(record.chat, filter=new_filter))
    return _filter_reply(saved.chat, unknown=(), prefix=ctx.prefix)


def _filter_error(lang: str, exc: FilterError, *, command: str, prefix: str) -> Reply:
    text = t(lang, f"filter.error.{exc.reason}", item=echo(exc.item), command=command, p=prefix)
    parts = [text]
    if exc.reason != filters.REASON_TOO_MANY:  # the words were fine, there are too many
        parts.append(t(lang, "filter.accepted"))
    parts.append(t(lang, "filter.nothing_changed"))
    return Reply(lang, "\n".join(parts))


def _filter_reply(chat: ChatSettings, *, unknown: Sequence[str], prefix: str) -> Reply:
    lang = chat.lang
    parts = [t(lang, "filter.now", filter=describe_filter(chat.filter, lang=lang, prefix=prefix))]
    if unknown:
        parts.append(t(lang, "filter.unknown_tags", tags=", ".join(unknown)))
    return Reply(lang, "\n\n".join(parts))


async def _picker(
    conn: AsyncConnection,
    record: chat_store.ChatRecord,
    *,
    prefix: str,
    note: str = "",
) -> Reply:
    lang = record.chat.lang
    counts = await current.tag_counts(conn)
    if not counts:
        return Reply(lang, t(lang, "subscribe.no_tags", p=prefix))
    chosen = record.chat.filter
    buttons: list[Button] = []
    for tag, count in counts:
        pressed = TOGGLE + tag
        if len(pressed.encode()) > MAX_ACTION_BYTES:
            continue
        # A required or excluded tag shows as such, not as followed or unselected.
        mark = (
            PICKER_REQUIRED
            if tag in chosen.required
            else PICKER_EXCLUDED
            if tag in chosen.excluded
            else PICKER_FOLLOWED
            if tag in chosen.any_of
            else ""
        )
        buttons.append(Button(label=f"{mark}{tag} ({count})", action=pressed))
        if len(buttons) == PICKER_TAGS:
            break
    rows = tuple(tuple(buttons[i : i + 3]) for i in range(0, len(buttons), 3))
    parts = [
        t(lang, "subscribe.pick"),
        t(lang, "filter.now", filter=describe_filter(chosen, lang=lang, prefix=prefix)),
    ]
    if chosen.required or chosen.excluded:
        parts[0] += "\n" + t(lang, "subscribe.pick_marks", p=prefix)
    if note:
        parts.insert(0, note)
    return Reply(lang, "\n\n".join(parts), buttons=rows)


@action(TOGGLE)
async def press_toggle(ports: Ports, caller: Caller, action: str, *, prefix: str) -> Reply:
    """A tag of the picker pressed: followed if it was not, no longer followed if it was."""
    if not await may_manage(caller):
        return await ports.in_chat(caller, answer(refusal_key(caller)), write=False)

    async def body(conn: AsyncConnection, record: chat_store.ChatRecord) -> Reply:
        return await _toggle(conn, record, action.removeprefix(TOGGLE), prefix=prefix)

    return await ports.in_chat(caller, body, write=True)


async def _toggle(
    conn: AsyncConnection, record: chat_store.ChatRecord, tag: str, *, prefix: str
) -> Reply:
    try:
        items = filters.parse_items([tag])
    except FilterError:
        return await _picker(conn, record, prefix=prefix)
    current = record.chat.filter
    tag = items[0].tag
    if tag in current.required or tag in current.excluded:
        # A press toggles "any of"; a required or excluded tag is changed by a command,
        # so the press changes nothing and says how.
        required = tag in current.required
        key = "subscribe.pick_required" if required else "subscribe.pick_excluded"
        note = t(record.chat.lang, key, tag=tag, p=prefix)
        return await _picker(conn, record, prefix=prefix, note=note)
    try:
        new_filter = (
            filters.remove(current, items) if tag in current.any_of else filters.add(current, items)
        )
    except FilterError as exc:
        return _filter_error(record.chat.lang, exc, command="subscribe", prefix=prefix)
    after = replace(record.chat, filter=new_filter)
    if after.state == ChatState.INACTIVE:
        after = replace(after, state=ChatState.ACTIVE)
    saved = await chat_store.save(conn, before=record, after=after)
    reply = await _picker(conn, saved, prefix=prefix)
    if current.is_empty and not saved.chat.filter.is_empty:  # as a typed `subscribe` says
        first = await _first_digest_note(conn, saved, prefix=prefix)
        if first:
            reply = replace(reply, text=f"{reply.text}\n\n{first}")
    return reply


@command("tags", order=50, audience=EVERYONE, slow=True, menu=Menu.GROUP)
async def tags_command(record: chat_store.ChatRecord, _args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    counts = await current.tag_counts(ctx.conn)
    if not counts:
        return Reply(lang, t(lang, "tags.none"))
    shown = [(clean(tag), count) for tag, count in counts[:TAGS_SHOWN]]
    listing = ", ".join(f"{tag} ({count})" for tag, count in shown if tag)
    text = f"{t(lang, 'tags.header')}\n{listing}"
    if len(counts) > TAGS_SHOWN:
        text += "\n" + tn(lang, "tags.more", len(counts) - TAGS_SHOWN)
    return Reply(lang, text)


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
