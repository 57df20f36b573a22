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

from bot.matching import filters, schedule
from bot.models import ChatKind, ChatSettings, ChatState, Filter, Mode, Platform, QuietHours
from bot.store import outbox as outbox_store
from bot.store.engine import among_bound, id_parts, reader
from bot.store.schema import chat_pages, chat_tags, chats, outbox, page_events
from bot.util import utcnow

# The statements every command runs, built once: building one and its cache key costs more
# CPU than SQLite takes to run it.
_BY_ADDRESS = select(chats).where(
    chats.c.platform == bindparam("platform"), chats.c.chat_id == bindparam("chat_id")
)
_UPDATE = update(chats).where(chats.c.id == bindparam("pk")).returning(chats)  # SET: the values
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


_LATEST_EVENT_ID = select(func.coalesce(func.max(page_events.c.id), 0))


async def latest_event_id(conn: AsyncConnection) -> int:
    return int((await conn.execute(_LATEST_EVENT_ID)).scalar_one())


async def get(conn: AsyncConnection, *, platform: Platform, chat_id: str) -> ChatRecord | None:
    result = await conn.execute(_BY_ADDRESS, {"platform": platform.value, "chat_id": chat_id})
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
    await _save_tags(conn, record.pk, defaults.filter, new=True)
    return record


def next_digest(chat: ChatSettings, *, after: dt.datetime) -> dt.datetime | None:
    """When ``chat``'s next digest is due after ``after``, as the store keeps it; None in
    instant mode (:func:`bot.matching.schedule.next_digest_for`)."""
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
    row = (await conn.execute(_UPDATE, {**values, "pk": before.pk})).mappings().one()
    if before.chat.filter != after.filter:
        await _save_tags(conn, before.pk, after.filter)
    return record_from_row(row)


async def _save_tags(conn: AsyncConnection, pk: int, f: Filter, *, new: bool = False) -> None:
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


async def remove_bot(engine: AsyncEngine, *, platform: Platform, chat_id: str) -> int:
    """The bot was removed from chat ``chat_id``: it and each of its forum topics become
    inactive, in one transaction. Returns how many chats that was (0: never seen)."""
    async with engine.begin() as conn:
        records = await with_topics(conn, platform=platform, chat_id=chat_id)
        for record in records:  # the group and each of its forum topics
            await deactivate(conn, pk=record.pk, reason=REMOVED_REASON, code=REMOVED)
    return len(records)


async def read(engine: AsyncEngine, *, platform: Platform, chat_id: str) -> ChatRecord | None:
    """The chat ``chat_id`` as stored, read beside any writer; None when never seen."""
    async with reader(engine).connect() as conn:
        return await get(conn, platform=platform, chat_id=chat_id)


async def record_workspace(
    engine: AsyncEngine, *, pk: int, team_id: str, enterprise_id: str | None
) -> None:
    """:func:`set_workspace` in a transaction of its own."""
    async with engine.begin() as conn:
        await set_workspace(conn, pk=pk, team_id=team_id, enterprise_id=enterprise_id)


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


async def readdress(
    engine: AsyncEngine, *, platform: Platform, old_chat_id: str, new_chat_id: str
) -> bool:
    """Chat ``old_chat_id`` is known as ``new_chat_id`` from now on, unless a chat has that
    id already (then both stay as they are: nothing is merged).

    Returns:
        Whether the chat moved.
    """
    async with engine.begin() as conn:
        old = await get(conn, platform=platform, chat_id=old_chat_id)
        return old is not None and await _readdress(conn, old, new_chat_id=new_chat_id)


async def _readdress(conn: AsyncConnection, record: ChatRecord, *, new_chat_id: str) -> bool:
    """:func:`readdress` of a chat already read, in the caller's transaction."""
    platform = record.chat.platform
    if await get(conn, platform=platform, chat_id=new_chat_id) is not None:
        return False
    await migrate_id(conn, pk=record.pk, new_chat_id=new_chat_id)
    return True


async def move(
    engine: AsyncEngine, *, platform: Platform, old_chat_id: str, new_chat_id: str
) -> bool:
    """:func:`migrate` in a transaction of its own; False when the old chat was never seen."""
    async with engine.begin() as conn:
        record = await migrate(
            conn, platform=platform, old_chat_id=old_chat_id, new_chat_id=new_chat_id
        )
    return record is not None


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


# What a chat's subscription is: taken from the newer row when a migration merge keeps it.
_SETTINGS_COLUMNS = (
    "state", "mode", "digest_time", "timezone", "lang", "filter", "next_digest_at",
    "inactive_reason", "inactive_code",
)  # fmt: skip


async def migrate_id(
    conn: AsyncConnection, *, pk: int, new_chat_id: str, now: dt.datetime | None = None
) -> ChatRecord | None:
    """A Telegram group became a supergroup: chat ``pk`` moves to ``new_chat_id``.

    When a chat already has the new id (someone typed a command in the supergroup before
    the bot learnt of the migration), the two rows become one, in the caller's transaction:

    * the older row survives (its id, cursor, ledger and queued messages stay), under the
      new id; the newer row's queued messages move to it, then the newer row is deleted;
    * the settings (filter, mode, time, zone, language, state) stay the older row's, unless
      the newer row was changed after it was created (a ``/subscribe``, ``/mode``... in the
      supergroup): that was said after the migration, so the newer settings are kept. The
      cursor is then the later of the two, so nothing from before is replayed.

    Returns the chat as stored now; None when ``pk`` does not exist. Calling it again (two
    replicas seeing the same migration) changes nothing more.
    """
    now = now or utcnow()
    older = (await conn.execute(select(chats).where(chats.c.id == pk))).mappings().first()
    if older is None:
        return None
    params = {"platform": older["platform"], "chat_id": new_chat_id}
    newer = (await conn.execute(_BY_ADDRESS, params)).mappings().first()
    values: dict[str, Any] = {"chat_id": new_chat_id, "updated_at": now}
    new_filter: str | None = None
    if newer is not None and newer["id"] != pk:
        if newer["updated_at"] > newer["created_at"]:
            values.update({name: newer[name] for name in _SETTINGS_COLUMNS})
            values["cursor"] = max(older["cursor"], newer["cursor"])
            new_filter = newer["filter"]
        await conn.execute(update(outbox).where(outbox.c.chat_pk == newer["id"]).values(chat_pk=pk))
        await conn.execute(delete(chats).where(chats.c.id == newer["id"]))
    row = (await conn.execute(_UPDATE, {**values, "pk": pk})).mappings().one()
    if new_filter is not None and new_filter != older["filter"]:
        await _save_tags(conn, pk, filter_of(new_filter))
    return record_from_row(row)


async def migrate(
    conn: AsyncConnection, *, platform: Platform, old_chat_id: str, new_chat_id: str
) -> ChatRecord | None:
    """:func:`migrate_id` by the old address; None when the old chat was never seen."""
    old = await get(conn, platform=platform, chat_id=old_chat_id)
    if old is None:
        return None
    return await migrate_id(conn, pk=old.pk, new_chat_id=new_chat_id)


def topic_prefix(chat_id: str) -> str:
    """The start of the ids of a Telegram forum's topics: ``-100123/`` for ``-100123``."""
    return f"{chat_id}/"


async def with_topics(
    conn: AsyncConnection, *, platform: Platform, chat_id: str
) -> list[ChatRecord]:
    """The chat ``chat_id`` and each of its forum topics (``-100123/45``) that the store has."""
    prefix = topic_prefix(chat_id)
    rows = await conn.execute(
        select(chats).where(
            chats.c.platform == platform.value,
            (chats.c.chat_id == chat_id) | (func.substr(chats.c.chat_id, 1, len(prefix)) == prefix),
        )
    )
    return [record_from_row(r) for r in rows.mappings()]


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


def describe(record: ChatRecord) -> dict[str, str]:
    """The keys of ``trendbot subscribers``: one chat's line, as data."""
    chat = record.chat
    return {
        "chat": chat.address,
        "state": chat.state.value,
        "mode": chat.mode.value,
        "time": chat.digest_time.strftime("%H:%M"),
        "tz": schedule.zone_label(chat.timezone),
        "lang": chat.lang,
        "filter": filters.format_filter(chat.filter),
    }


async def had_pages(conn: AsyncConnection, chat_pk: int) -> bool:
    """Whether any page was ever planned for the chat (it had a digest or a page)."""
    query = select(chat_pages.c.page_id).where(chat_pages.c.chat_pk == chat_pk).limit(1)
    return (await conn.execute(query)).first() is not None


async def set_workspace(
    conn: AsyncConnection, *, pk: int, team_id: str, enterprise_id: str | None
) -> None:
    """Record the Slack workspace (and Enterprise Grid organisation) chat ``pk`` is in."""
    await conn.execute(
        update(chats)
        .where(chats.c.id == pk)
        .values(team_id=team_id[:32], enterprise_id=(enterprise_id or "")[:32] or None)
    )


def _of_team(platform: Platform, team_id: str, enterprise_id: str | None) -> Any:
    """Chats of a workspace or, for an org-wide install (no team), of an organisation."""
    if team_id:
        return (chats.c.platform == platform.value) & (chats.c.team_id == team_id)
    return (chats.c.platform == platform.value) & (chats.c.enterprise_id == enterprise_id)


async def deactivate_team(
    conn: AsyncConnection,
    *,
    platform: Platform,
    team_id: str,
    enterprise_id: str | None = None,
    reason: str,
    code: str,
) -> list[int]:
    """Every active or paused chat of the workspace becomes inactive for ``reason``
    (``code``); their primary keys."""
    where = _of_team(platform, team_id, enterprise_id) & (chats.c.state != ChatState.INACTIVE.value)
    return await _change_state(
        conn,
        where,
        state=ChatState.INACTIVE.value,
        inactive_reason=reason[:500],
        inactive_code=code[:CODE_CHARS],
    )


async def reactivate_team(
    conn: AsyncConnection,
    *,
    platform: Platform,
    team_id: str,
    enterprise_id: str | None = None,
    codes: frozenset[str],
) -> int:
    """The workspace's chats made inactive for one of ``codes`` are active again, from the
    newest page event on: nothing missed is replayed. How many."""
    where = (
        _of_team(platform, team_id, enterprise_id)
        & (chats.c.state == ChatState.INACTIVE.value)
        & chats.c.inactive_code.in_(sorted(codes))
    )
    pks = await _change_state(
        conn,
        where,
        state=ChatState.ACTIVE.value,
        inactive_reason=None,
        inactive_code=None,
        cursor=_LATEST_EVENT_ID.scalar_subquery(),
    )
    return len(pks)


async def _change_state(conn: AsyncConnection, where: Any, **values: Any) -> list[int]:
    """The chats matching ``where`` take ``values`` (and a new ``updated_at``); their primary
    keys, read first so that the caller can act on exactly those chats."""
    pks = [int(pk) for (pk,) in await conn.execute(select(chats.c.id).where(where))]
    if pks:
        await conn.execute(
            update(chats).where(chats.c.id.in_(pks)).values(**values, updated_at=utcnow())
        )
    return pks


async def team_installed(
    engine: AsyncEngine,
    *,
    platform: Platform,
    team_id: str,
    enterprise_id: str | None,
    address: Callable[[str], str],
    codes: frozenset[str],
) -> int:
    """The app was installed (again) in a workspace, in one transaction: its chats of a
    single-token setup move to ``address(chat_id)`` (:func:`readdress`: unless a chat has
    that id already), and :func:`reactivate_team` of ``codes``. How many became active."""
    async with engine.begin() as conn:
        if team_id:
            for old in await unaddressed_of_team(conn, platform=platform, team_id=team_id):
                await _readdress(conn, old, new_chat_id=address(old.chat.chat_id))
        return await reactivate_team(
            conn, platform=platform, team_id=team_id, enterprise_id=enterprise_id, codes=codes
        )


async def team_removed(
    conn: AsyncConnection,
    *,
    platform: Platform,
    team_id: str,
    enterprise_id: str | None,
    reason: str,
    code: str,
) -> int:
    """:func:`deactivate_team`, and every message still queued for those chats fails with
    ``reason``, in the caller's transaction. How many chats."""
    pks = await deactivate_team(
        conn,
        platform=platform,
        team_id=team_id,
        enterprise_id=enterprise_id,
        reason=reason,
        code=code,
    )
    for pk in pks:
        await outbox_store.fail_chat(conn, chat_pk=pk, error=reason)
    return len(pks)


async def enterprise_of_team(
    conn: AsyncConnection, *, platform: Platform, team_id: str
) -> str | None:
    """The Enterprise Grid organisation a workspace's chats were seen in, if any."""
    row = (
        await conn.execute(
            select(chats.c.enterprise_id)
            .where(
                chats.c.platform == platform.value,
                chats.c.team_id == team_id,
                chats.c.enterprise_id.is_not(None),
            )
            .limit(1)
        )
    ).first()
    return str(row[0]) if row is not None else None


async def unaddressed_of_team(
    conn: AsyncConnection, *, platform: Platform, team_id: str
) -> list[ChatRecord]:
    """The workspace's chats whose id does not name the workspace (``C456``, not
    ``T123/C456``): those of a single-token setup."""
    rows = await conn.execute(
        select(chats).where(
            chats.c.platform == platform.value,
            chats.c.team_id == team_id,
            ~chats.c.chat_id.contains("/"),
        )
    )
    return [record_from_row(r) for r in rows.mappings()]
