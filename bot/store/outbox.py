"""The delivery queue (outbox): claiming its messages and recording how each went.

Messages are put in it, and the ledger of what each chat was planned is written, by
:mod:`bot.store.queueing`.

A row moves ``queued`` -> ``sending`` (claimed by one worker) -> ``sent``; a failure moves
it back to ``queued`` with a later ``not_before``, or to ``failed`` (retries exhausted, or
the chat is gone), or to ``held`` (sent with no answer, then re-sent with no answer either:
it may have arrived, so it is not sent again; ``unknown_sends`` counts such sends).
``parts_sent`` is committed after each platform message, so a message that was already sent
is not sent again after a crash; only the one in flight can be.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import (
    Update,
    and_,
    bindparam,
    func,
    select,
    text,
    update,
)
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from bot import payloads
from bot.store.engine import among, among_bound, id_parts
from bot.store.schema import chats, outbox
from bot.util import utcnow

QUEUED = "queued"
SENDING = "sending"
SENT = "sent"
FAILED = "failed"
HELD = "held"

BULK_CHUNK = 10_000  # rows per statement of a bulk insert: bounds the memory of one call


@dataclass(frozen=True, slots=True)
class OutboxRow:
    id: int
    chat_pk: int
    platform: str
    kind: str
    payload: dict[str, Any]
    attempts: int
    parts_sent: int
    thread_ref: str | None
    broadcast_id: int | None
    created_at: dt.datetime
    unknown_sends: int  # sends with no answer: each may have arrived
    # The payload typed, or why it cannot be: decoded once, as the row is read.
    decoded: payloads.Payload | payloads.PayloadError = field(compare=False, repr=False)

    def content(self) -> payloads.Payload:
        """The payload, typed (:func:`bot.payloads.decode`; old rows read too).

        Raises:
            payloads.PayloadError: for a payload no version of the format describes.
        """
        if isinstance(self.decoded, payloads.PayloadError):
            raise payloads.PayloadError(*self.decoded.args)
        return self.decoded


@functools.lru_cache(maxsize=4096)
def _decoded(
    kind: str, text: str
) -> tuple[dict[str, Any], payloads.Payload | payloads.PayloadError]:
    """A stored payload parsed and typed (or why it cannot be), once for all the rows that
    hold the same text: a digest goes to every chat with the same filter as one payload.
    The parsed dict is shared between those rows; it is read, never changed. Text that is
    not JSON (a row edited by hand) is a payload error of that row alone, as a payload of
    the wrong shape is: the claim and the other rows go on."""
    try:
        payload = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return {}, payloads.PayloadError(f"not JSON: {exc}")
    try:
        return payload, payloads.decode(kind, payload)
    except payloads.PayloadError as exc:
        return payload, exc


# The claim's rows are read in the order of ``ix_outbox_ready`` and no further than the batch.
# PostgreSQL's planner would do so only when its statistics say many rows are queued, and
# they are stale as a rule: the queue goes from empty to a million rows and back every day,
# and autovacuum analyses the table a minute or more after a large insert. Believing a few
# rows queued, it read all million and sorted them: a second a claim. For the query of a
# claim of any due rows, sorting and bitmap scans (which lose the index's order) are ruled
# out.
_IN_INDEX_ORDER = text(
    "SELECT set_config('enable_sort', :on, true), set_config('enable_bitmapscan', :on, true)"
)


async def claim(
    conn: AsyncConnection,
    *,
    worker: str,
    limit: int,
    now: dt.datetime,
    platforms: Iterable[str],
    exclude_chats: Iterable[int] = (),
    only_chats: Iterable[int] | None = None,
    only_broadcast: int | None = None,
) -> list[OutboxRow]:
    """Claim up to ``limit`` due rows, oldest first within priority, for this worker.

    A chat's messages are sent by one worker at a time, so its per-chat limit holds across
    processes: rows of a chat another worker is sending to are left for that worker. On
    PostgreSQL the rows and their chats are locked ``FOR UPDATE SKIP LOCKED`` so replicas
    never claim the same row or chat at once; on SQLite the immediate transaction
    serialises claimers.
    """
    query = (
        select(outbox.c.id, outbox.c.chat_pk)
        .where(
            outbox.c.status == QUEUED,
            outbox.c.not_before <= now,
            outbox.c.platform.in_(list(platforms)),
        )
        .order_by(outbox.c.priority.desc(), outbox.c.not_before, outbox.c.id)
        .limit(limit)
    )
    excluded = list(exclude_chats)
    if excluded:
        query = query.where(outbox.c.chat_pk.not_in(excluded))
    if only_chats is not None:
        query = query.where(outbox.c.chat_pk.in_(list(only_chats)))
    if only_broadcast is not None:
        query = query.where(outbox.c.broadcast_id == only_broadcast)
    postgres = conn.dialect.name == "postgresql"
    # A claim for some chats or one broadcast is better served by their own indexes (and a
    # sort of their few rows) than by a walk past every other queued row.
    in_order = postgres and only_chats is None and only_broadcast is None
    if postgres:
        query = query.with_for_update(skip_locked=True)
    if in_order:
        await conn.execute(_IN_INDEX_ORDER, {"on": "off"})
    candidates = [(row_id, chat_pk) for row_id, chat_pk in await conn.execute(query)]
    if in_order:
        await conn.execute(_IN_INDEX_ORDER, {"on": "on"})
    if not candidates:
        return []
    chat_pks = sorted({chat_pk for _, chat_pk in candidates})
    busy = {
        chat_pk
        for (chat_pk,) in await conn.execute(
            select(outbox.c.chat_pk)
            .where(
                outbox.c.status == SENDING,
                outbox.c.claimed_by != worker,
                among(conn, outbox.c.chat_pk, chat_pks),
            )
            .distinct()
        )
    }
    free = [pk for pk in chat_pks if pk not in busy]
    if postgres and free:
        locked = await conn.execute(
            select(chats.c.id)
            .where(among(conn, chats.c.id, free))
            .with_for_update(skip_locked=True)
        )
        free = [pk for (pk,) in locked]
    allowed = set(free)
    ids = [row_id for row_id, chat_pk in candidates if chat_pk in allowed]
    if not ids:
        return []
    # The claimed rows as the update left them, put back in the candidates' order (by
    # priority, then age): RETURNING gives them in no order of its own.
    returned = await conn.execute(
        update(outbox)
        .where(among(conn, outbox.c.id, ids))
        .values(status=SENDING, claimed_by=worker, claimed_at=now)
        .returning(*outbox.c)
    )
    claimed = {r["id"]: r for r in returned.mappings()}
    return [_row(claimed[row_id]) for row_id in ids if row_id in claimed]


async def one(conn: AsyncConnection, *, row_id: int) -> OutboxRow | None:
    """The outbox row ``row_id``, or None when there is none (rows are kept once sent)."""
    found = (await conn.execute(select(outbox).where(outbox.c.id == row_id))).mappings().first()
    return _row(found) if found is not None else None


def _row(r: RowMapping) -> OutboxRow:
    payload, decoded = _decoded(r["kind"], r["payload"])
    return OutboxRow(
        id=r["id"],
        chat_pk=r["chat_pk"],
        platform=r["platform"],
        kind=r["kind"],
        payload=payload,
        attempts=r["attempts"],
        parts_sent=r["parts_sent"],
        thread_ref=r["thread_ref"],
        broadcast_id=r["broadcast_id"],
        created_at=r["created_at"],
        unknown_sends=r["unknown_sends"],
        decoded=decoded,
    )


async def part_sent(
    conn: AsyncConnection, *, row_id: int, parts_sent: int, thread_ref: str | None
) -> None:
    await conn.execute(
        update(outbox)
        .where(outbox.c.id == row_id)
        .values(parts_sent=parts_sent, thread_ref=thread_ref)
    )


async def sent(conn: AsyncConnection, *, row_id: int, now: dt.datetime) -> None:
    await conn.execute(
        update(outbox)
        .where(outbox.c.id == row_id)
        .values(status=SENT, sent_at=now, claimed_by=None, last_error=None)
    )


@functools.cache
def _sent_many(dialect: str) -> Update:
    """:func:`sent_many`'s statement, built once for each store: a record of sends is made
    many times a second."""
    return (
        update(outbox)
        .where(among_bound(outbox.c.id, "ids", postgres=dialect == "postgresql"))
        .values(status=SENT, sent_at=bindparam("now"), claimed_by=None, last_error=None)
    )


async def sent_many(conn: AsyncConnection, *, row_ids: Sequence[int], now: dt.datetime) -> None:
    """:func:`sent` for several rows, one statement per part of the ids."""
    statement = _sent_many(conn.dialect.name)
    for part in id_parts(conn, list(row_ids)):
        await conn.execute(statement, {"ids": list(part), "now": now})


async def parts_sent_many(
    conn: AsyncConnection, progress: Sequence[tuple[int, int, str | None]]
) -> None:
    """:func:`part_sent` for several rows: ``(row_id, parts_sent, thread_ref)`` each."""
    if progress:
        await conn.execute(
            update(outbox)
            .where(outbox.c.id == bindparam("row_id"))
            .values(parts_sent=bindparam("parts"), thread_ref=bindparam("ref")),
            [{"row_id": row_id, "parts": parts, "ref": ref} for row_id, parts, ref in progress],
        )


async def retry_later(
    conn: AsyncConnection,
    *,
    row_id: int,
    not_before: dt.datetime,
    error: str,
    count_attempt: bool = True,
    unknown: bool = False,
) -> None:
    """Back to the queue; ``count_attempt`` is false for a 429 (waiting is not failing);
    ``unknown``: the send had no answer (``unknown_sends`` counts it)."""
    values: dict[str, Any] = {
        "status": QUEUED,
        "not_before": not_before,
        "last_error": error[:1000],
        "claimed_by": None,
    }
    if count_attempt:
        values["attempts"] = outbox.c.attempts + 1
    if unknown:
        values["unknown_sends"] = outbox.c.unknown_sends + 1
    await conn.execute(update(outbox).where(outbox.c.id == row_id).values(**values))


async def fail(conn: AsyncConnection, *, row_id: int, error: str, attempts: int) -> None:
    await conn.execute(
        update(outbox)
        .where(outbox.c.id == row_id)
        .values(status=FAILED, last_error=error[:1000], attempts=attempts, claimed_by=None)
    )


async def hold(
    conn: AsyncConnection,
    *,
    row_id: int,
    error: str,
    attempts: int,
    unknown: bool,
    now: dt.datetime,
) -> None:
    """The message is ``held``: it may have arrived (``unknown``: this send had no answer
    either, counted in ``unknown_sends``), and it is not sent again. ``sent_at`` is when it
    was held."""
    values: dict[str, Any] = {
        "status": HELD,
        "last_error": error[:1000],
        "attempts": attempts,
        "claimed_by": None,
        "sent_at": now,
    }
    if unknown:
        values["unknown_sends"] = outbox.c.unknown_sends + 1
    await conn.execute(update(outbox).where(outbox.c.id == row_id).values(**values))


async def fail_chat(conn: AsyncConnection, *, chat_pk: int, error: str) -> tuple[int, set[int]]:
    """The chat is gone: every message still waiting for it fails with ``error``.

    Returns how many failed, and the broadcasts they belonged to.
    """
    waiting = and_(outbox.c.chat_pk == chat_pk, outbox.c.status.in_((QUEUED, SENDING)))
    rows = await conn.execute(select(outbox.c.broadcast_id).where(waiting).distinct())
    broadcasts = {b for (b,) in rows if b is not None}
    result = await conn.execute(
        update(outbox)
        .where(waiting)
        .values(status=FAILED, last_error=error[:1000], claimed_by=None)
    )
    return int(result.rowcount or 0), broadcasts


async def release_claims(conn: AsyncConnection, *, worker: str) -> int:
    """A worker stopping cleanly gives back the rows it claimed and did not start."""
    result = await conn.execute(
        update(outbox)
        .where(outbox.c.status == SENDING, outbox.c.claimed_by == worker)
        .values(status=QUEUED, claimed_by=None)
    )
    return int(result.rowcount or 0)


async def claim_owners(conn: AsyncConnection) -> list[str]:
    rows = await conn.execute(
        select(outbox.c.claimed_by).where(outbox.c.status == SENDING).distinct()
    )
    return [owner for (owner,) in rows if owner]


async def requeue_stale(
    conn: AsyncConnection,
    *,
    claimed_before: dt.datetime,
    dead_owners: Sequence[str] = (),
    not_before: dt.datetime | None = None,
) -> int:
    """Rows claimed by a worker that died go back to the queue, due at ``not_before`` (or
    at once): a claim older than the cutoff (not refreshed), or one whose owner is known
    to be gone.

    The message that was in flight when it died may have reached the chat: this is the
    only place a duplicate can come from (see the README's delivery rule).
    """
    stale = outbox.c.claimed_at < claimed_before
    if dead_owners:
        stale = stale | outbox.c.claimed_by.in_(list(dead_owners))
    result = await conn.execute(
        update(outbox)
        .where(outbox.c.status == SENDING, stale)
        .values(
            status=QUEUED,
            claimed_by=None,
            **({"not_before": not_before} if not_before is not None else {}),
        )
    )
    return int(result.rowcount or 0)


async def touch_claims(conn: AsyncConnection, *, worker: str, now: dt.datetime) -> None:
    """Keep this worker's claims fresh so ``requeue_stale`` leaves them alone."""
    await conn.execute(
        update(outbox)
        .where(outbox.c.status == SENDING, outbox.c.claimed_by == worker)
        .values(claimed_at=now)
    )


async def retry_failed(conn: AsyncConnection, *, chat_pks: Sequence[int] | None = None) -> int:
    """Failed messages of active chats get a fresh set of attempts (``digest --now``)."""
    active = select(chats.c.id).where(chats.c.state == "active")
    query = update(outbox).where(outbox.c.status == FAILED, outbox.c.chat_pk.in_(active))
    if chat_pks is not None:
        query = query.where(outbox.c.chat_pk.in_(list(chat_pks)))
    result = await conn.execute(
        query.values(status=QUEUED, attempts=0, not_before=utcnow(), claimed_by=None)
    )
    return int(result.rowcount or 0)


async def pending(
    conn: AsyncConnection, *, chat_pks: Sequence[int] | None = None
) -> tuple[int, dt.datetime | None]:
    """Messages queued or being sent (for these chats), and when the earliest is due."""
    query = select(func.count(), func.min(outbox.c.not_before)).where(
        outbox.c.status.in_((QUEUED, SENDING))
    )
    if chat_pks is not None:
        query = query.where(outbox.c.chat_pk.in_(list(chat_pks)))
    count, earliest = (await conn.execute(query)).one()
    return int(count), earliest


async def oldest_queued_age(conn: AsyncConnection, *, now: dt.datetime) -> float:
    oldest = (
        await conn.execute(
            select(func.min(outbox.c.created_at)).where(outbox.c.status.in_((QUEUED, SENDING)))
        )
    ).scalar_one()
    return (now - oldest).total_seconds() if oldest else 0.0
