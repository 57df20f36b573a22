"""The engine on each backend: read-only transactions beside writers, writers queueing on
SQLite, failed transactions, and connections the server dropped."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event, insert, select, text, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bot import payloads
from bot.models import ChatSettings, ChatState, Platform
from bot.store import chats as chat_store
from bot.store import engine as engine_module
from bot.store import outbox, queueing
from bot.store.engine import create_engine, reader, upgrade
from bot.store.schema import chat_pages, chat_tags, chats
from bot.util import utcnow
from tests.integration.test_admin import subscribers
from tests.waiting import wait_until

# Far below SQLite's busy timeout (30 s): a read that queued behind the writer would miss it.
NOT_BLOCKED = 2.0


def _chat(chat_id: str) -> ChatSettings:
    return ChatSettings(platform=Platform.TELEGRAM, chat_id=chat_id)


async def _create(engine: AsyncEngine, chat_id: str) -> chat_store.ChatRecord:
    async with engine.begin() as conn:
        return await chat_store.ensure(conn, defaults=_chat(chat_id))


async def _get(engine: AsyncEngine, chat_id: str) -> chat_store.ChatRecord | None:
    async with reader(engine).connect() as conn:
        return await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id=chat_id)


async def test_a_read_waits_for_no_writer_and_holds_none_up(engine: AsyncEngine) -> None:
    record = await _create(engine, "1")
    async with engine.begin() as writer:
        await chat_store.deactivate(writer, pk=record.pk, reason="left", code="removed")
        async with asyncio.timeout(NOT_BLOCKED):
            seen = await _get(engine, "1")
    assert seen is not None and seen.chat.state == ChatState.ACTIVE  # as committed before

    async with reader(engine).connect() as conn:
        await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id="1")
        async with asyncio.timeout(NOT_BLOCKED):
            await _create(engine, "2")  # a writer beside the open read
    assert await _get(engine, "2") is not None


async def test_two_writers_queue_instead_of_failing(engine: AsyncEngine) -> None:
    """A transaction that reads and then writes while another writer commits: on SQLite the
    second waits for the write lock (``BEGIN IMMEDIATE``) rather than failing the first's
    upgrade from reading to writing."""
    record = await _create(engine, "1")
    async with engine.begin() as first:
        before = await chat_store.get(first, platform=Platform.TELEGRAM, chat_id="1")
        assert before is not None
        second = asyncio.create_task(_create(engine, "2"))
        await asyncio.sleep(0.2)  # the second is waiting for the lock; nothing says when
        await chat_store.save(first, before=before, after=replace(before.chat, lang="ko"))
    await second
    saved = await _get(engine, "1")
    assert saved is not None and saved.pk == record.pk and saved.chat.lang == "ko"
    assert await _get(engine, "2") is not None


async def test_a_failed_transaction_leaves_nothing_and_the_next_one_works(
    engine: AsyncEngine,
) -> None:
    with pytest.raises(RuntimeError):
        async with engine.begin() as conn:
            await chat_store.ensure(conn, defaults=_chat("1"))
            raise RuntimeError("the command failed")
    assert await _get(engine, "1") is None

    with pytest.raises(IntegrityError):  # its very first statement fails
        async with engine.begin() as conn:
            await conn.execute(insert(chat_tags).values(chat_pk=999_999, tag="rl", kind="any"))
    async with engine.begin():
        pass  # a transaction with no statement at all
    assert (await _create(engine, "2")).chat.chat_id == "2"


async def test_row_counts_and_many_rows(engine: AsyncEngine) -> None:
    for chat_id in ("1", "2", "3"):
        await _create(engine, chat_id)
    async with engine.begin() as conn:
        result = await conn.execute(
            update(chats).where(chats.c.chat_id.in_(["1", "2"])).values(lang="ko")
        )
        assert result.rowcount == 2
        pks = [r.pk for r in (await chat_store.get_many(conn, [1, 2, 3])).values()]
        await conn.execute(
            insert(chat_tags), [{"chat_pk": pk, "tag": "rl", "kind": "any"} for pk in pks]
        )
    async with reader(engine).connect() as conn:
        assert dict(await chat_store.subscriber_counts(conn)) == {"rl": 3}


# ---------------------------------------------------------------------- dropped connections


@pytest.fixture
async def postgres(engine: AsyncEngine, database_url: str) -> AsyncIterator[AsyncEngine]:
    """A second engine on the same PostgreSQL database, to end the first one's connections."""
    if engine.dialect.name != "postgresql":
        pytest.skip("connections dropped by a server: PostgreSQL only")
    other = create_async_engine(database_url)
    try:
        yield other
    finally:
        await other.dispose()


async def _backend_pid(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(text("SELECT pg_backend_pid()"))).scalar_one())


async def _terminate(postgres: AsyncEngine, pid: int) -> None:
    async with postgres.connect() as conn:
        await conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})

        async def ended() -> bool:
            left = await conn.execute(
                text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid"), {"pid": pid}
            )
            return left.scalar_one() == 0

        await wait_until(ended, what=f"backend {pid} to end")


async def test_an_idle_connection_the_server_dropped_is_replaced_unseen(
    database_url: str, postgres: AsyncEngine
) -> None:
    eager = create_engine(database_url, idle_ping_seconds=0.0)  # every connection "idle"
    try:
        pid = await _backend_pid(eager)
        await _terminate(postgres, pid)
        assert await _backend_pid(eager) != pid  # pinged on checkout, replaced, no error
    finally:
        await eager.dispose()


async def test_a_connection_dropped_while_busy_fails_one_transaction(
    engine: AsyncEngine, postgres: AsyncEngine
) -> None:
    pid = await _backend_pid(engine)
    await _terminate(postgres, pid)  # in use moments ago: not pinged
    with pytest.raises(DBAPIError) as failed:
        await _backend_pid(engine)
    assert failed.value.connection_invalidated
    assert await _backend_pid(engine) != pid  # the pool has replaced it


async def test_the_stock_sqlite_adapter_is_the_fallback_and_behaves_the_same(
    tmp_path: Path,
) -> None:
    # The installed SQLAlchemy and aiosqlite get the one-trip adapter...
    assert engine_module.fast_sqlite_supported()
    # ...and without it (other versions) the stock one keeps every rule above.
    checks = (
        test_a_read_waits_for_no_writer_and_holds_none_up,
        test_two_writers_queue_instead_of_failing,
        test_a_failed_transaction_leaves_nothing_and_the_next_one_works,
    )
    for number, check in enumerate(checks):
        stock = create_async_engine(
            f"sqlite+aiosqlite:///{tmp_path / f'stock{number}.db'}",
            connect_args={"timeout": engine_module.SQLITE_BUSY_TIMEOUT_MS / 1000},
        )
        engine_module._configure_sqlite(stock)
        try:
            await upgrade(stock)
            await check(stock)
        finally:
            await stock.dispose()


@pytest.mark.parametrize("count", [0, 1, 1_201])
async def test_among_selects_exactly_the_ids_given_in_as_few_parts_as_the_store_takes(
    engine: AsyncEngine, count: int
) -> None:
    await subscribers(engine, 2 * count + 1)
    async with engine.begin() as conn:
        pks = sorted((await conn.execute(select(chats.c.id))).scalars())
        wanted = pks[::2][:count]  # every other chat, more than SQLite takes in one list
        parts = list(engine_module.id_parts(conn, wanted))
        found = [
            pk
            for part in parts
            for pk in (
                await conn.execute(
                    select(chats.c.id).where(engine_module.among(conn, chats.c.id, part))
                )
            ).scalars()
        ]
        # The same through a statement built once with the ids as a parameter.
        records = await chat_store.get_many(conn, wanted)
    assert sorted(found) == wanted
    assert sorted(records) == wanted and all(records[pk].pk == pk for pk in wanted)
    postgres = engine.dialect.name == "postgresql"
    assert len(parts) == (min(count, 1) if postgres else -(-count // 500))


_fingerprints = st.text(
    # Any text a varchar holds: UTF-8 (no lone surrogates), and no NUL.
    st.characters(codec="utf-8", blacklist_characters="\x00"),
    max_size=64,
)
_page_groups = st.lists(
    st.dictionaries(st.integers(1, 2**31 - 1), _fingerprints, max_size=6).map(
        lambda pages: tuple(pages.items())
    ),
    min_size=1,
    max_size=4,
)


async def _record_and_read(
    database_url: str,
    planned: list[tuple[int, int]],
    groups: list[tuple[tuple[int, str], ...]],
    at: dt.datetime,
) -> set[tuple[int, int, str, dt.datetime]]:
    engine = create_engine(database_url)
    try:
        await upgrade(engine)
        # Rolled back: each example starts with no rows.
        async with engine.connect() as conn, conn.begin() as transaction:
            await queueing.record_planned(conn, planned, groups, at=at)
            found = {tuple(row) for row in await conn.execute(select(chat_pages))}
            await transaction.rollback()
        return found
    finally:
        await engine.dispose()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    groups=_page_groups,
    chats_of=st.lists(st.integers(0, 3), max_size=8),
    at=st.datetimes(min_value=dt.datetime(1970, 1, 1), max_value=dt.datetime(2200, 1, 1)),
)
def test_ledger_rows_recorded_by_group_are_read_back_exactly(
    database_url: str,
    groups: list[tuple[tuple[int, str], ...]],
    chats_of: list[int],
    at: dt.datetime,
) -> None:
    """On PostgreSQL the rows go as a binary COPY encoded here (``bot.store.pgcopy``):
    every key, fingerprint and time must arrive as given, on both stores."""
    planned = [(pk, group % len(groups)) for pk, group in enumerate(chats_of, start=1)]
    found = asyncio.run(_record_and_read(database_url, planned, groups, at))
    assert found == {
        (pk, page_id, fp, at) for pk, group in planned for page_id, fp in groups[group]
    }


async def test_a_claim_takes_due_rows_in_order_by_walking_the_ready_index(
    engine: AsyncEngine,
) -> None:
    """Claims take the due rows by priority, then age, then id, reading them in that order
    from ``ix_outbox_ready`` and stopping at the batch: no sort of every queued row (at a
    million queued rows a claim took 0.3 s on SQLite and 1 s on PostgreSQL)."""
    await subscribers(engine, 60)
    async with engine.connect() as conn:
        pks = sorted((await conn.execute(select(chats.c.id))).scalars())
    now = utcnow()
    # 6,000 messages, a hundred a chat, of three priorities and seven ages; ids in this order.
    rows = [
        queueing.row_values(
            chat_pk=pks[i % len(pks)],
            platform="telegram",
            kind=payloads.NOTICE,
            payload=payloads.Notice(text=f"n{i}"),
            now=now - dt.timedelta(seconds=i % 7),
            priority=(i % 3) * 5,
        )
        for i in range(6_000)
    ]
    rows[0]["not_before"] = now + dt.timedelta(hours=1)  # not due yet
    async with engine.begin() as conn:
        await queueing.enqueue(conn, rows)
    if engine.dialect.name == "postgresql":
        claimed, plan = await _claim_explained_by_postgresql(engine, now=now)
        # The table has no statistics yet, as after a large insert: believing a few rows
        # queued, the planner would read and sort all of them.
        assert "ix_outbox_ready" in plan and "Sort" not in plan, plan
    else:
        claimed, plan = await _claim_explained_by_sqlite(engine, now=now)
        assert "ix_outbox_ready" in plan and "TEMP B-TREE" not in plan, plan
    due = sorted(
        (i for i, r in enumerate(rows) if r["not_before"] <= now),
        key=lambda i: (-rows[i]["priority"], rows[i]["not_before"], i),
    )
    assert [r.payload["text"] for r in claimed] == [f"n{i}" for i in due[:25]]


async def _claim_explained_by_postgresql(
    engine: AsyncEngine, *, now: dt.datetime
) -> tuple[list[outbox.OutboxRow], str]:
    """A claim of 25, and the plan PostgreSQL ran its candidates' query with (logged to
    the client by ``auto_explain``)."""
    notices: list[str] = []
    async with engine.connect() as conn:
        driver = (await conn.get_raw_connection()).driver_connection
        assert driver is not None
        driver.add_log_listener(lambda _conn, message: notices.append(str(message.message)))
        for setting in (
            "LOAD 'auto_explain'",
            "SET auto_explain.log_min_duration = 0",
            "SET auto_explain.log_level = notice",
        ):
            await conn.exec_driver_sql(setting)
        await conn.commit()  # the settings stay for the session
        try:
            async with conn.begin():
                claimed = await outbox.claim(
                    conn, worker="w", limit=25, now=now, platforms=["telegram"]
                )
        finally:
            await conn.invalidate()  # its session settings go with it
    plans = [n for n in notices if "ORDER BY" in n and "SKIP LOCKED" in n]
    assert len(plans) == 1, notices
    return claimed, plans[0]


async def _claim_explained_by_sqlite(
    engine: AsyncEngine, *, now: dt.datetime
) -> tuple[list[outbox.OutboxRow], str]:
    """A claim of 25, and SQLite's plan for the candidates' query it ran."""
    statements: list[tuple[str, Sequence[Any]]] = []

    def seen(
        _conn: object, _cursor: object, statement: str, params: Sequence[Any], *_: object
    ) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "ORDER BY" in statement:
            statements.append((statement, params))

    event.listen(engine.sync_engine, "before_cursor_execute", seen)
    try:
        async with engine.begin() as conn:
            claimed = await outbox.claim(
                conn, worker="w", limit=25, now=now, platforms=["telegram"]
            )
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", seen)
    candidates, params = statements[0]
    async with engine.connect() as conn:
        found = await conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {candidates}", tuple(params))
        return claimed, "\n".join(str(row) for row in found.all())
