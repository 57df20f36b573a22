"""Putting messages in the outbox, and the ledger of what each chat was planned.

A message goes in ``queued`` (:func:`row_values`, :func:`enqueue`); the outbox
(:mod:`bot.store.outbox`) claims it and records how its sending went. The planner writes
many thousands of rows at once, so the inserts here bypass SQLAlchemy's per-row work
(:func:`insert_many`).
"""

from __future__ import annotations

import datetime as dt
import functools
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Table, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from bot import payloads
from bot.store import pgcopy
from bot.store.outbox import BULK_CHUNK, QUEUED
from bot.store.schema import chat_pages, outbox
from bot.util import chunks

_LEDGER_COLUMNS = ("chat_pk", "page_id", "fingerprint", "planned_at")
_MISSING = object()


def row_values(
    *,
    chat_pk: int,
    platform: str,
    kind: str,
    payload: payloads.Payload | str,
    now: dt.datetime,
    priority: int = 0,
    broadcast_id: int | None = None,
) -> dict[str, Any]:
    """An outbox row's values; ``payload`` typed, or its JSON text already made
    (:func:`bot.payloads.encode_digest`)."""
    if not isinstance(payload, str):
        payload = payloads.encode(payload)
    return {
        "chat_pk": chat_pk,
        "platform": platform,
        "kind": kind,
        "payload": payload,
        "status": QUEUED,
        "priority": priority,
        "attempts": 0,
        "parts_sent": 0,
        "unknown_sends": 0,
        "not_before": now,
        "broadcast_id": broadcast_id,
        "created_at": now,
    }


def row_for(row: Mapping[str, Any], *, chat_pk: int, now: dt.datetime) -> dict[str, Any]:
    """``row`` (made by :func:`row_values`) for another chat, written at ``now``: a payload
    that many chats get is encoded once."""
    return {**row, "chat_pk": chat_pk, "not_before": now, "created_at": now}


async def record_planned(
    conn: AsyncConnection,
    planned: Sequence[tuple[int, int]],
    pages: Sequence[Sequence[tuple[int, str]]],
    *,
    at: dt.datetime,
) -> None:
    """New ledger rows, all planned ``at``: for each ``(chat_pk, group)`` of ``planned``,
    one row for each ``(page_id, fingerprint)`` of ``pages[group]``.

    Chats planned the same pages share a group. On PostgreSQL each group's fields are
    encoded once, and a chat's rows are its key joined to them, for a binary ``COPY``
    (:mod:`bot.store.pgcopy`): encoding every row's fields (13 million rows for a million
    chats) was a third of the planner's CPU.
    """
    if not planned:
        return
    if conn.dialect.name != "postgresql":
        rows = [(pk, page_id, fp) for pk, group in planned for page_id, fp in pages[group]]
        await insert_many(
            conn, chat_pages, ("chat_pk", "page_id", "fingerprint"), rows, same={"planned_at": at}
        )
        return
    start, stamp = pgcopy.row_start(4), pgcopy.timestamp(at)
    # A group's rows without the chat's key (the first field): page, fingerprint, time.
    tails = [[_page_fields(page_id, fp) + stamp for page_id, fp in group] for group in pages]
    data = [pgcopy.HEADER]
    for pk, group in planned:
        if tail := tails[group]:
            key = start + pgcopy.int4(pk)
            data.append(key + key.join(tail))
    data.append(pgcopy.TRAILER)
    driver = await _driver_in_transaction(conn)
    # A memoryview, not bytes: asyncpg would take bytes for a file's path.
    source = memoryview(b"".join(data))
    await driver.copy_to_table(
        chat_pages.name, source=source, columns=list(_LEDGER_COLUMNS), format="binary"
    )


@functools.lru_cache(maxsize=4096)
def _page_fields(page_id: int, fingerprint: str) -> bytes:
    """A ledger row's page and fingerprint fields, for ``COPY``: the same few pages are in
    every batch of a planning run."""
    return pgcopy.int4(page_id) + pgcopy.text(fingerprint)


async def enqueue(conn: AsyncConnection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert outbox rows made by :func:`row_values` (they all have its keys)."""
    if not rows:
        return
    first = rows[0]
    # What every row has alike (the batch's time, status, ...) is passed once; the chat
    # always varies (and one row's values are all "alike").
    same = {k: v for k, v in first.items() if k != "chat_pk" and all(r[k] == v for r in rows)}
    varying = tuple(k for k in first if k not in same)
    await insert_many(
        conn, outbox, varying, [tuple(r[k] for k in varying) for r in rows], same=same
    )


async def insert_many(
    conn: AsyncConnection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    same: Mapping[str, Any],
) -> None:
    """``rows`` (values of ``columns``, in order), each with the values of ``same``, inserted
    in bulk past SQLAlchemy's per-row work; for any table of the schema (``bench/fanout.py``
    seeds a million chats with it).

    Planning 100,000 chats writes 100,000 messages and over a million ledger rows, and
    SQLAlchemy's processing of every row's parameters took longer than the planning itself.
    Here the values are converted by the columns' own bind processors (those of ``same``
    once) and handed to the driver: on PostgreSQL to a binary ``COPY`` (``INSERT ...
    SELECT FROM unnest(...)`` before it already took a third less server time than a
    row-by-row ``executemany``), elsewhere to ``executemany`` of the insert SQLAlchemy
    compiles.
    """
    if not rows:
        return
    if not columns:
        raise ValueError("a bulk insert needs a column whose values vary")
    dialect = conn.dialect

    def processor(name: str) -> Callable[[Any], Any] | None:
        return table.c[name].type.dialect_impl(dialect).bind_processor(dialect)

    constants = []
    for name, value in same.items():
        convert = processor(name)
        constants.append(convert(value) if convert is not None else value)
    converters = [(i, convert) for i, c in enumerate(columns) if (convert := processor(c))]
    if converters:
        converted_rows = [list(row) for row in rows]
        for i, convert in converters:
            seen: dict[Any, Any] = {}
            for row in converted_rows:
                value = seen.get(row[i], _MISSING)
                if value is _MISSING:
                    value = seen[row[i]] = convert(row[i])
                row[i] = value
        rows = converted_rows
    names = [*columns, *same]
    if dialect.name == "postgresql":
        # A binary COPY into the table, in this transaction: asyncpg's encoding of the
        # arrays of an ``INSERT ... SELECT FROM unnest(...)`` checked every element against
        # the abstract base classes, a fifth of the planner's CPU at a million chats.
        driver = await _driver_in_transaction(conn)
        for part in chunks(rows, BULK_CHUNK):
            await driver.copy_records_to_table(
                table.name, columns=names, records=[(*row, *constants) for row in part]
            )
        return
    compiled = insert(table).compile(dialect=dialect, column_keys=names)
    order = [names.index(name) for name in compiled.positiontup or ()]
    pick = operator.itemgetter(*order)  # the statement's parameters are in the table's order
    for part in chunks(rows, BULK_CHUNK):
        if order == list(range(len(names))):
            params = [(*row, *constants) for row in part]
        else:
            params = [pick((*row, *constants)) for row in part]
        await conn.exec_driver_sql(str(compiled), params)


async def _driver_in_transaction(conn: AsyncConnection) -> Any:
    """The asyncpg connection under ``conn``, in ``conn``'s transaction (SQLAlchemy begins
    it on the first statement), for a ``COPY``."""
    driver = (await conn.get_raw_connection()).driver_connection
    assert driver is not None
    if not driver.is_in_transaction():
        await conn.exec_driver_sql("SELECT 1")
    return driver
