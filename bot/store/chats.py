"""Chats: subscriptions, preferences and delivery state."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from sqlalchemy import Select, bindparam, delete, func, insert, select, update
from sqlalchemy.engine import RowMapping
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.models import ChatKind, ChatSettings, ChatState, Filter, Mode, Platform, QuietHours
from bot.rules import filters, schedule
from bot.store import outbox as outbox_store
from bot.store.engine import among_bound, id_parts, reader
from bot.store.schema import chat_pages, chat_tags, chats, page_events
from bot.util import utcnow

# The statements every command runs, built once: building one and its cache key costs more
# CPU than SQLite takes to run it.
BY_ADDRESS = select(chats).where(
    chats.c.platform == bindparam("platform"), chats.c.chat_id == bindparam("chat_id")
)
UPDATE = update(chats).where(chats.c.id == bindparam("pk")).returning(chats)  # SET: the values
_INSERT = insert(chats).returning(chats)
_DELETE_TAGS = delete(chat_tags).where(chat_tags.c.chat_pk == bindparam("pk"))
_INSERT_TAGS = insert(chat_tags)


T = TypeVar("T")

# chats.inactive_code holds a short stable word; anything longer is cut to this.
CODE_CHARS = 64
# The bot was removed from the chat (or banned from it): why, and its code.
REMOVED_REASON = "removed from chat"
REMOVED = "removed"


@dataclass(frozen=True, slots=True)
class ChatRecord:
    pk: int
    chat: ChatSettings
    cursor: int
    next_digest_at: dt.datetime | None
    inactive_reason: str | None = None  # why the chat stopped, for people
    inactive_code: str | None = None  # the same as a short stable word, for the code
    held_until: dt.datetime | None = None  # instant pages held by quiet hours until then
    team_id: str | None = None  # Slack: the chat's workspace


@functools.lru_cache(maxsize=16_384)
def filter_of(text: str) -> Filter:
    """The :class:`Filter` a chat's stored filter text describes.

    Cached: chats share a few thousand distinct filters, and parsing one (Unicode
    normalisation of every tag) for each of 100,000 chats was a large part of planning them.
    Filters are immutable, so chats may share one.
    """
    return filters.parse_filter(text)


E = TypeVar("E", Platform, ChatKind, ChatState, Mode)


def _member_of(kind: type[E]) -> Callable[[str], E]:
    """``kind(value)`` by a dict lookup: four enum calls a chat were a tenth of the CPU of
    loading the chats of a claim. A value no member has still raises ``ValueError``."""
    members: dict[str, E] = {member.value: member for member in kind}

    def member(value: str) -> E:
        found = members.get(value)
        return kind(value) if found is None else found

    return member


_platform = _member_of(Platform)
_kind = _member_of(ChatKind)
_state = _member_of(ChatState)
_mode = _member_of(Mode)


@functools.lru_cache(maxsize=2048)
def _time_of(text: str) -> dt.time:
    hour, minute = (int(x) for x in text.split(":"))
    return dt.time(hour, minute)


@functools.lru_cache(maxsize=4096)
def quiet_of(text: str | None) -> QuietHours | None:
    """The :class:`QuietHours` of a chat's stored quiet hours (None: none); cached, as
    :func:`filter_of` is, for the many chats that share a few."""
    return schedule.quiet_of(text)


# What :func:`record_from_row` reads, for the queries of many chats: the row without the
# columns it does not (two of them timestamps, which SQLite's rows parse from text).
_RECORD_COLUMNS = [
    c for c in chats.c if c.name not in {"title", "created_at", "updated_at", "enterprise_id"}
]


def record_from_row(row: RowMapping) -> ChatRecord:
    return ChatRecord(
        pk=row["id"],
        chat=ChatSettings(
            platform=_platform(row["platform"]),
            chat_id=row["chat_id"],
            kind=_kind(row["kind"]),
            state=_state(row["state"]),
            mode=_mode(row["mode"]),
            digest_time=_time_of(row["digest_time"]),
            timezone=row["timezone"],
            lang=row["lang"],
            filter=filter_of(row["filter"]),
            weekday=row["weekday"],
            quiet=quiet_of(row["quiet"]),
            limit=row["digest_limit"],
        ),
        cursor=row["cursor"],
        next_digest_at=row["next_digest_at"],
        inactive_reason=row["inactive_reason"],
        inactive_code=row["inactive_code"],
        held_until=row["held_until"],
        team_id=row["team_id"],
    )


LATEST_EVENT_ID = select(func.coalesce(func.max(page_events.c.id), 0))


async def latest_event_id(conn: AsyncConnection) -> int:
    return int((await conn.execute(LATEST_EVENT_ID)).scalar_one())


async def get(conn: AsyncConnection, *, platform: Platform, chat_id: str) -> ChatRecord | None:
    result = await conn.execute(BY_ADDRESS, {"platform": platform.value, "chat_id": chat_id})
    row = result.mappings().first()
    return record_from_row(row) if row else None


async def get_by_pk(conn: AsyncConnection, pk: int) -> ChatRecord | None:
    row = (await conn.execute(select(chats).where(chats.c.id == pk))).mappings().first()
    return record_from_row(row) if row else None


@functools.cache
def _records_by_pk(dialect: str) -> Select[Any]:
    """The records of the chats of ``:pks``, the statement built once for each store."""
    return select(*_RECORD_COLUMNS).where(
        among_bound(chats.c.id, "pks", postgres=dialect == "postgresql")
    )


async def get_many(conn: AsyncConnection, pks: Sequence[int]) -> dict[int, ChatRecord]:
    """The chats of ``pks`` that exist, by primary key: one query per part of the keys
    (:func:`bot.store.engine.id_parts`)."""
    found: dict[int, ChatRecord] = {}
    statement = _records_by_pk(conn.dialect.name)
    for part in id_parts(conn, list(pks)):
        for row in (await conn.execute(statement, {"pks": list(part)})).mappings():
            found[row["id"]] = record_from_row(row)
    return found


async def ensure(
    conn: AsyncConnection,
    *,
    defaults: ChatSettings,
    title: str | None = None,
    now: dt.datetime | None = None,
) -> ChatRecord:
    """The chat ``defaults.platform:defaults.chat_id``, created with ``defaults`` if new.

    A new chat's cursor starts at the newest page event: it is offered what is published
    from now on, not the history (``latest`` shows that).
    """
    found = await get(conn, platform=defaults.platform, chat_id=defaults.chat_id)
    if found is not None:
        return found
    now = now or utcnow()
    values = _values(defaults, now=now)
    values.update(
        platform=defaults.platform.value,
        chat_id=defaults.chat_id,
        kind=defaults.kind.value,
        title=(title or "")[:255] or None,
        cursor=await latest_event_id(conn),
        created_at=now,
    )
    row = (await conn.execute(_INSERT, values)).mappings().one()
    record = record_from_row(row)
    await save_tags(conn, record.pk, defaults.filter, new=True)
    return record


def next_digest(chat: ChatSettings, *, after: dt.datetime) -> dt.datetime | None:
    """When ``chat``'s next digest is due after ``after``, as the store keeps it; None in
    instant mode (:func:`bot.rules.schedule.next_digest_for`)."""
    due = schedule.next_digest_for(chat, now=after)
    return None if due is None else schedule.naive_utc(due)


def _values(chat: ChatSettings, *, now: dt.datetime) -> dict[str, Any]:
    next_at = next_digest(chat, after=now)
    return {
        "state": chat.state.value,
        "mode": chat.mode.value,
        "digest_time": chat.digest_time.strftime("%H:%M"),
        "timezone": chat.timezone,
        "lang": chat.lang,
        "filter": filters.format_filter(chat.filter),
        "next_digest_at": next_at,
        "updated_at": now,
        "weekday": chat.weekday,
        "quiet": str(chat.quiet) if chat.quiet else None,
        "digest_limit": chat.limit,
    }


async def save(
    conn: AsyncConnection,
    *,
    before: ChatRecord,
    after: ChatSettings,
    now: dt.datetime | None = None,
) -> ChatRecord:
    """Store ``after`` as the chat's settings.

    A chat that becomes active again (from paused or inactive) skips what was published
    meanwhile: its cursor moves to the newest page event. A change of time or zone moves
    the next digest; the chat's pending pages are kept for it.
    """
    now = now or utcnow()
    values = _values(after, now=now)
    if before.chat.state != ChatState.ACTIVE and after.state == ChatState.ACTIVE:
        values["cursor"] = await latest_event_id(conn)
        values["inactive_reason"] = None
        values["inactive_code"] = None
    schedule_same = (
        before.chat.digest_time == after.digest_time
        and before.chat.timezone == after.timezone
        and schedule.digest_weekday(before.chat.mode, before.chat.weekday)
        == schedule.digest_weekday(after.mode, after.weekday)
        and before.chat.quiet == after.quiet
    )
    if after.mode != Mode.INSTANT:
        values["held_until"] = None  # held pages go in the chat's next digest
    if schedule_same and before.next_digest_at is not None and values["next_digest_at"]:
        values["next_digest_at"] = before.next_digest_at
    # RETURNING: the row as stored, without a second query (SQLite 3.35+, PostgreSQL).
    row = (await conn.execute(UPDATE, {**values, "pk": before.pk})).mappings().one()
    if before.chat.filter != after.filter:
        await save_tags(conn, before.pk, after.filter)
    return record_from_row(row)


async def save_tags(conn: AsyncConnection, pk: int, f: Filter, *, new: bool = False) -> None:
    """The chat's tags as ``f`` has them; ``new``: the chat has none stored yet."""
    if not new:
        await conn.execute(_DELETE_TAGS, {"pk": pk})
    rows = [
        {"chat_pk": pk, "tag": tag, "kind": kind}
        for kind, tags in (("any", f.any_of), ("required", f.required), ("excluded", f.excluded))
        for tag in sorted(tags)
    ]
    if rows:
        await conn.execute(_INSERT_TAGS, rows)


async def in_chat(
    engine: AsyncEngine,
    *,
    defaults: ChatSettings,
    title: str | None,
    body: Callable[[AsyncConnection, ChatRecord], Awaitable[T]],
    write: bool,
) -> T:
    """``body`` on the chat ``defaults.platform:defaults.chat_id``, in one transaction with
    reading the chat; a chat seen for the first time is created with ``defaults``.

    With ``write`` false the transaction only reads (on SQLite it waits for no writer);
    creating a chat takes a transaction that writes, either way.
    """
    if not write:
        async with reader(engine).connect() as conn:
            record = await get(conn, platform=defaults.platform, chat_id=defaults.chat_id)
            if record is not None:
                return await body(conn, record)
    for attempt in (1, 2):
        try:
            async with engine.begin() as conn:
                record = await ensure(conn, defaults=defaults, title=title)
                return await body(conn, record)
        except IntegrityError:
            # Another command of the same new chat created it first (PostgreSQL runs
            # both at once): all of this was rolled back; once more, on that chat.
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


async def read(engine: AsyncEngine, *, platform: Platform, chat_id: str) -> ChatRecord | None:
    """The chat ``chat_id`` as stored, read beside any writer; None when never seen."""
    async with reader(engine).connect() as conn:
        return await get(conn, platform=platform, chat_id=chat_id)


async def stop(
    engine: AsyncEngine, *, platform: Platform, chat_id: str, reason: str, code: str
) -> bool:
    """Chat ``chat_id`` can take no more messages: it becomes inactive for ``reason``
    (``code``) and every message still queued for it fails, in one transaction.

    Returns:
        False when there was nothing to stop: a chat never seen, or inactive already.
    """
    async with engine.begin() as conn:
        record = await get(conn, platform=platform, chat_id=chat_id)
        if record is None or record.chat.state == ChatState.INACTIVE:
            return False
        await deactivate(conn, pk=record.pk, reason=reason, code=code)
        await outbox_store.fail_chat(conn, chat_pk=record.pk, error=reason)
    return True


async def reactivate(
    engine: AsyncEngine,
    *,
    platform: Platform,
    chat_id: str,
    codes: frozenset[str],
    states: frozenset[ChatState],
    since: dt.datetime | None = None,
) -> bool:
    """Chat ``chat_id``, stopped (in one of ``states``) for one of ``codes`` (at ``since``
    or later, when given), is active again from the newest page event on: nothing
    published meanwhile is replayed.

    Returns:
        False when the chat is not such a chat (never seen, active, or stopped otherwise).
    """
    async with engine.begin() as conn:
        record = await get(conn, platform=platform, chat_id=chat_id)
        if record is None or record.chat.state not in states or record.inactive_code not in codes:
            return False
        if since is not None:
            stopped_at = await conn.scalar(
                select(chats.c.updated_at).where(chats.c.id == record.pk)
            )
            if stopped_at is None or stopped_at < since:
                return False  # asked too long ago: it stays inactive
        await save(conn, before=record, after=replace(record.chat, state=ChatState.ACTIVE))
    return True


async def deactivate(
    conn: AsyncConnection,
    *,
    pk: int,
    reason: str,
    code: str,
    state: ChatState = ChatState.INACTIVE,
) -> None:
    """Chat ``pk`` stops (inactive, or paused) for ``reason``, which ``code`` names in a
    short stable word (a :class:`~bot.errors.DeliveryError`'s ``code``, ``is_archived``)."""
    await conn.execute(
        update(chats)
        .where(chats.c.id == pk)
        .values(
            state=state.value,
            inactive_reason=reason[:500],
            inactive_code=code[:CODE_CHARS],
            updated_at=utcnow(),
        )
    )


async def listing(conn: AsyncConnection) -> list[ChatRecord]:
    rows = (await conn.execute(select(chats).order_by(chats.c.platform, chats.c.id))).mappings()
    return [record_from_row(r) for r in rows]


async def subscriber_counts(
    conn: AsyncConnection, *, workspace: str | None = None
) -> Mapping[str, int]:
    """Chats subscribed to each tag (any-of or required); of one Slack workspace if given."""
    count = func.count(chat_tags.c.chat_pk)
    query = select(chat_tags.c.tag, count).where(chat_tags.c.kind != "excluded")
    if workspace:
        query = query.where(chat_tags.c.chat_pk.in_(of_workspace(workspace)))
    rows = await conn.execute(
        query.group_by(chat_tags.c.tag).order_by(count.desc(), chat_tags.c.tag)
    )
    return {tag: n for tag, n in rows}


def of_workspace(workspace: str) -> Any:
    """The primary keys of a Slack workspace's chats, as a subquery."""
    return select(chats.c.id).where(
        chats.c.platform == Platform.SLACK.value, chats.c.team_id == workspace
    )


# ``trendbot subscribers``' ``reason=``: a stopped chat's stored code as one stable word an
# operator can search for. A code not named here is shown as it is stored.
STOP_REASONS = {
    "blocked": "blocked",  # Telegram 403: the user blocked the bot
    "removed": "removed",  # Telegram: the bot left or was removed (my_chat_member)
    "not_in_channel": "removed",  # Slack: the app is not a member of the channel
    "is_archived": "archived",  # Slack channel_archive, chat.postMessage is_archived
    "channel_is_archived": "archived",
    "channel_not_found": "unknown_channel",
    "channel_deleted": "unknown_channel",
    "gone": "unknown_chat",  # Telegram 400 "chat not found", "group chat was deactivated"...
    "user_not_found": "unknown_user",
    "topic_closed": "topic_closed",  # Telegram forum topics
    "topic_deleted": "topic_deleted",
    "awaiting_invite": "awaiting_invite",  # Slack: asked for in a channel the app is not in
    "app_uninstalled": "app_uninstalled",
    "tokens_revoked": "tokens_revoked",
    "no_installation": "app_uninstalled",
}
# Telegram's 403 texts that mean the bot is out of the group rather than blocked by a user.
_REMOVED_MARKERS = ("kicked", "not a member", "deleted")
# A chat paused with the pause command has no code.
PAUSED_IN_CHAT = "paused_in_chat"
UNKNOWN_REASON = "unknown"


def stop_reason(record: ChatRecord) -> str | None:
    """Why a chat that is not active is stopped, as one word (None: it is active)."""
    if record.chat.state == ChatState.ACTIVE:
        return None
    code = record.inactive_code
    if not code:
        return PAUSED_IN_CHAT if record.chat.state == ChatState.PAUSED else UNKNOWN_REASON
    word = STOP_REASONS.get(code, code)
    text = (record.inactive_reason or "").lower()
    if word == "blocked" and any(marker in text for marker in _REMOVED_MARKERS):
        return "removed"
    return word


def describe(record: ChatRecord) -> dict[str, str]:
    """The keys of ``trendbot subscribers``: one chat's line, as data (``reason`` only for
    a chat that is not active)."""
    chat = record.chat
    fields = {
        "chat": chat.address,
        "state": chat.state.value,
        "mode": chat.mode.value,
        "time": chat.digest_time.strftime("%H:%M"),
        "tz": schedule.zone_label(chat.timezone),
        "lang": chat.lang,
        "filter": filters.format_filter(chat.filter),
    }
    reason = stop_reason(record)
    if reason is not None:
        fields = {
            "chat": fields.pop("chat"),
            "state": fields.pop("state"),
            "reason": reason,
            **fields,
        }
    return fields


async def had_pages(conn: AsyncConnection, chat_pk: int) -> bool:
    """Whether any page was ever planned for the chat (it had a digest or a page)."""
    query = select(chat_pages.c.page_id).where(chat_pages.c.chat_pk == chat_pk).limit(1)
    return (await conn.execute(query)).first() is not None
