"""The settings page's side of the command core: the link a ``settings`` reply offers,
what the page shows, its live preview, and saving it. Each is a function over the core's
:class:`~bot.commands.base.Ports`; the web routes call them through the core, which passes
them on.

Saving goes where ``import`` goes: the page's fields become one settings line
(:func:`bot.matching.transfer.line_of`), checked whole by :func:`~bot.matching.transfer.import_line`
and stored in the chat's transaction, so a bad value is named and nothing is half-applied;
the chat gets the confirmation it would get for the command, queued in that transaction.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

from sqlalchemy.ext.asyncio import AsyncConnection

from bot import payloads
from bot.commands.base import Caller, Ports, chat_record, may_manage, refusal_key, save
from bot.commands.destinations import transfer_error_text
from bot.commands.feedback import votes_chart
from bot.commands.help import describe_settings
from bot.commands.registry import EVERYONE, Menu, command
from bot.errors import FilterError, TransferError
from bot.i18n import t
from bot.matching import transfer
from bot.models import (
    Button,
    Chart,
    ChatKind,
    ChatSettings,
    ChatState,
    DigestItem,
    Filter,
    Platform,
    Reply,
    Toast,
)
from bot.platforms import rules
from bot.rules import feeds, filters
from bot.store import chats as chat_store
from bot.store import current, queueing
from bot.store import feeds as feed_store
from bot.store import pages as page_store
from bot.store import settings_links as link_store
from bot.util import utcnow

__all__ = [
    "APP_PATH",
    "NOTICE_PRIORITY",
    "OPEN_PATH",
    "OPEN_PRIVATELY",
    "PAGE_PATH",
    "PREVIEW_DAYS",
    "PREVIEW_SCAN",
    "PREVIEW_SHOWN",
    "Door",
    "PageView",
    "Preview",
    "PrivateLink",
    "Refused",
    "Saved",
    "link_url",
    "open_page_privately",
    "open_settings_app",
    "open_settings_link",
    "page_new_feed",
    "page_preview",
    "page_view",
    "peek_settings_link",
    "save_page",
    "settings_command",
    "settings_link",
    "settings_session",
]

PAGE_PATH = "/settings/"  # under PUBLIC_BASE_URL
OPEN_PATH = PAGE_PATH + "open/"  # + the link's token
# A group's button when its replies are public: the link goes to the presser privately.
OPEN_PRIVATELY = "page:open"
APP_PATH = PAGE_PATH + "app"  # the Telegram Mini App's entry (its initData, not a link)
PREVIEW_DAYS = 30  # "these pages of the last 30 days would have reached you"
PREVIEW_SCAN = 2000  # pages read for a preview at most, newest first
PREVIEW_SHOWN = 10  # titles the preview lists
NOTICE_PRIORITY = 20  # the confirmation goes ahead of digests, as a reply would


@dataclass(frozen=True, slots=True)
class Door:
    """What a settings link would open: its chat, named in the chat's language."""

    address: str
    lang: str


@dataclass(frozen=True, slots=True)
class PageView:
    """What the page shows of a chat."""

    record: chat_store.ChatRecord
    tags: tuple[tuple[str, int], ...]  # every tag of a present page, with its page count
    line: str  # the chat's settings as ``export`` writes them
    votes: Chart | None  # what the chat's votes taught, as ``feedback`` draws it


@dataclass(frozen=True, slots=True)
class Preview:
    count: int
    items: tuple[DigestItem, ...]


@dataclass(frozen=True, slots=True)
class Saved:
    lang: str  # the chat's language after the save
    text: str  # the confirmation, as the chat receives it


@dataclass(frozen=True, slots=True)
class PrivateLink:
    """A settings link to send to its caller's private chat ``chat_id``, and the toast
    that tells them where it went."""

    chat_id: str
    reply: Reply
    toast: Toast


@dataclass(frozen=True, slots=True)
class Refused:
    lang: str
    text: str  # what is wrong, and that nothing changed


def link_url(base: str, token: str) -> str:
    return f"{base.rstrip('/')}{OPEN_PATH}{token}"


@command("settings", order=60, audience=EVERYONE, menu=Menu.GROUP, usage="", alone=True)
async def settings_command(
    ports: Ports, caller: Caller, *, name: str, args: str, prefix: str
) -> Reply:
    """The chat's settings, and for who may change them (with ``PUBLIC_BASE_URL``) a
    button to the settings page: a link that works once, for a quarter of an hour. In
    a group whose replies everyone sees (Telegram's), the button sends the link to the
    administrator who presses it, in their private chat with the bot."""
    base = ports.public_base_url
    offer = base is not None and await may_manage(caller)
    public = caller.chat_kind == ChatKind.GROUP and not rules(caller.platform).private_replies

    async def body(conn: AsyncConnection, record: chat_store.ChatRecord) -> Reply:
        lang = record.chat.lang
        text = describe_settings(record, prefix=prefix)
        minutes = int(link_store.LINK_LIFETIME.total_seconds() // 60)
        if offer and public:
            button = Button(label=t(lang, "page.open"), action=OPEN_PRIVATELY)
            note = t(lang, "page.link_privately_note", minutes=minutes)
            return Reply(lang, f"{text}\n\n{note}", buttons=((button,),))
        url = await settings_link(ports, conn, chat_pk=record.pk) if offer else None
        if url is None or base is None:
            return Reply(lang, text)
        app = f"{base.rstrip('/')}{APP_PATH}" if caller.chat_kind == ChatKind.PRIVATE else None
        button = Button(label=t(lang, "page.open"), url=url, app=app)
        note = t(lang, "page.link_note", minutes=minutes)
        return Reply(lang, f"{text}\n\n{note}", buttons=((button,),))

    return await ports.in_chat(caller, body, write=offer and not public)


async def open_page_privately(ports: Ports, caller: Caller) -> PrivateLink | Toast:
    """The press of a group's "Open settings" (:data:`OPEN_PRIVATELY`): a link to the
    group's page for the presser's private chat with the bot (where it was started; a
    private chat's id is its user's), or a toast saying why not."""
    group = await ports.in_chat(caller, chat_record, write=False)
    lang = group.chat.lang
    if ports.public_base_url is None or not await may_manage(caller):
        return Toast(lang, t(lang, refusal_key(caller)))
    async with ports.reader.connect() as conn:
        own = await chat_store.get(conn, platform=caller.platform, chat_id=caller.user_id)
    if own is None or own.chat.kind != ChatKind.PRIVATE or own.chat.state == ChatState.INACTIVE:
        return Toast(lang, t(lang, "page.start_privately"))
    async with ports.engine.begin() as conn:
        url = await settings_link(ports, conn, chat_pk=group.pk)
    if url is None:
        return Toast(lang, t(lang, refusal_key(caller)))
    to = own.chat.lang
    minutes = int(link_store.LINK_LIFETIME.total_seconds() // 60)
    title = group.chat.address
    text = t(to, "page.link_for_group", chat=title, minutes=minutes)
    button = Button(label=t(to, "page.open"), url=url)
    return PrivateLink(
        chat_id=own.chat.chat_id,
        reply=Reply(to, text, buttons=((button,),)),
        toast=Toast(lang, t(lang, "page.link_sent")),
    )


async def settings_link(ports: Ports, conn: AsyncConnection, *, chat_pk: int) -> str | None:
    """A new link to the chat's settings page, or None without ``PUBLIC_BASE_URL``.
    The caller has been checked: only who may change the chat gets one."""
    if ports.public_base_url is None:
        return None
    token = await link_store.issue(conn, chat_pk=chat_pk, now=utcnow())
    return link_url(ports.public_base_url, token)


async def open_settings_link(ports: Ports, token: str) -> link_store.Opened | link_store.Refusal:
    """Open a settings link: a browser session for its chat, or why not."""
    async with ports.engine.begin() as conn:
        return await link_store.open_link(conn, token=token, now=utcnow())


async def peek_settings_link(ports: Ports, token: str) -> Door | link_store.Refusal:
    """What a settings link would open, or why not, opening nothing."""
    async with ports.reader.connect() as conn:
        found = await link_store.peek(conn, token=token, now=utcnow())
        if isinstance(found, link_store.Refusal):
            return found
        record = await chat_store.get_by_pk(conn, found)
    if record is None:
        return link_store.Refusal.UNKNOWN
    return Door(address=record.chat.address, lang=record.chat.lang)


async def open_settings_app(
    ports: Ports, *, platform: Platform, user_id: str
) -> link_store.Opened | None:
    """A session for ``user_id``'s private chat with the bot, opened from an in-app view
    whose platform proved the user (a Telegram Mini App's ``initData``); None for a user
    who never talked to the bot."""
    async with ports.engine.begin() as conn:
        record = await chat_store.get(conn, platform=platform, chat_id=user_id)
        if record is None or record.chat.kind != ChatKind.PRIVATE:
            return None
        return await link_store.open_session(conn, chat_pk=record.pk, now=utcnow())


async def settings_session(ports: Ports, session: str) -> int | None:
    """The chat a live settings session may change, or None."""
    async with ports.reader.connect() as conn:
        return await link_store.session_chat(conn, session=session, now=utcnow())


async def page_view(ports: Ports, chat_pk: int) -> PageView | None:
    async with ports.reader.connect() as conn:
        record = await chat_store.get_by_pk(conn, chat_pk)
        if record is None:
            return None
        counts = await current.tag_counts(conn)
        chart = await votes_chart(conn, chat_pk=chat_pk, lang=record.chat.lang)
    return PageView(
        record=record,
        tags=tuple(counts),
        line=transfer.export_line(record.chat),
        votes=chart,
    )


async def page_new_feed(ports: Ports, chat_pk: int) -> str | None:
    """A new address of the chat's private feed, as ``feed reset`` gives one (the old one
    stops working); the chat is told its feed moved, without the address, which the
    page alone shows. None without ``PUBLIC_BASE_URL`` or for a chat that is gone."""
    base = ports.public_base_url
    if base is None:
        return None
    async with ports.engine.begin() as conn:
        record = await chat_store.get_by_pk(conn, chat_pk)
        if record is None:
            return None
        token = await feed_store.issue(conn, chat_pk=chat_pk)
        lang = record.chat.lang
        await queueing.enqueue(
            conn,
            [
                queueing.row_values(
                    chat_pk=chat_pk,
                    platform=record.chat.platform.value,
                    kind=payloads.NOTICE,
                    payload=payloads.Notice(text=t(lang, "page.feed_moved_notice")),
                    now=utcnow(),
                    priority=NOTICE_PRIORITY,
                )
            ],
        )
    return feeds.feed_url(base, token)


async def page_preview(ports: Ports, filter_text: str, *, today: dt.date) -> Preview | FilterError:
    """The pages of the last :data:`PREVIEW_DAYS` days the filter ``filter_text`` lets
    through, newest first (the count of all, the titles of the first few)."""
    try:
        wanted = filters.parse_filter(filter_text) if filter_text.strip() else Filter()
    except FilterError as exc:
        return exc
    since = today - dt.timedelta(days=PREVIEW_DAYS)
    found: list[DigestItem] = []
    async with ports.reader.connect() as conn:
        ids = await current.newest_page_ids(conn, limit=PREVIEW_SCAN)
        loaded = await page_store.load_pages(conn, ids) if ids else {}
    for page_id in ids:
        page = loaded.get(page_id)
        if page is None:
            continue
        day = page.updated or page.created
        if day is not None and day < since:
            break  # newest first: the rest are older
        if not wanted.is_empty and filters.matches(wanted, page.tags):
            matched = filters.matched_tags(wanted, page.tags)
            found.append(DigestItem(page=page, matched=matched, page_id=page_id))
    return Preview(count=len(found), items=tuple(found[:PREVIEW_SHOWN]))


async def save_page(
    ports: Ports, chat_pk: int, *, fields: dict[str, str], paused: bool, prefix: str
) -> Saved | Refused | None:
    """Apply the page's ``fields`` (by the names of the settings line) and its pause
    switch to the chat, all or nothing; ``prefix`` spells commands as the chat's
    platform does. None: the chat is gone."""
    async with ports.reader.connect() as conn:
        found = await chat_store.get_by_pk(conn, chat_pk)
    if found is None:
        return None
    line = transfer.line_of(fields)
    chat = found.chat
    caller = Caller(platform=chat.platform, chat_id=chat.chat_id, user_id="", chat_kind=chat.kind)

    async def body(conn: AsyncConnection, record: chat_store.ChatRecord) -> Saved | Refused:
        lang = record.chat.lang
        try:
            after = transfer.import_line(record.chat, line)
        except TransferError as exc:
            wrong = transfer_error_text(lang, exc)
            return Refused(lang, wrong + "\n" + t(lang, "dest.import.nothing_changed"))
        after = _paused(after, paused=paused)
        saved, _ = await save(conn, record, after)
        lang = saved.chat.lang
        shown = describe_settings(saved, prefix=prefix)
        text = t(lang, "page.saved_notice") + "\n\n" + shown
        if after != record.chat:
            await queueing.enqueue(
                conn,
                [
                    queueing.row_values(
                        chat_pk=saved.pk,
                        platform=saved.chat.platform.value,
                        kind=payloads.NOTICE,
                        payload=payloads.Notice(text=text),
                        now=utcnow(),
                        priority=NOTICE_PRIORITY,
                    )
                ],
            )
        return Saved(lang, text)

    return await ports.in_chat(caller, body, write=True)


def _paused(chat: ChatSettings, *, paused: bool) -> ChatSettings:
    """The page's pause switch: it pauses an active chat and resumes a paused one; a chat
    the platform stopped (inactive) stays as it is until a command revives it."""
    if paused and chat.state == ChatState.ACTIVE:
        return replace(chat, state=ChatState.PAUSED)
    if not paused and chat.state == ChatState.PAUSED:
        return replace(chat, state=ChatState.ACTIVE)
    return chat
