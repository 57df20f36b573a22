"""The delivery engine's rows in memory (``bot.delivery.queues.Queues``), alone: chats taken
in the order they are ready and one worker at a time, the low water mark that wakes the
claimer, and a broadcast reported once this instance holds none of its rows."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import create_async_engine

from bot import payloads
from bot.delivery.queues import Queues
from bot.delivery.rendering import Renderer
from bot.models import ChatSettings, Platform
from bot.store.chats import ChatRecord
from bot.store.outbox import OutboxRow

NOTICE = payloads.Notice(text="hello")


def row(row_id: int, chat_pk: int, *, broadcast: int | None = None) -> OutboxRow:
    return OutboxRow(
        id=row_id,
        chat_pk=chat_pk,
        platform="telegram",
        kind="notice",
        payload={},
        attempts=0,
        parts_sent=0,
        thread_ref=None,
        broadcast_id=broadcast,
        created_at=dt.datetime(2026, 1, 1),
        unknown_sends=0,
        decoded=NOTICE,
    )


def record(pk: int) -> ChatRecord:
    chat = ChatSettings(platform=Platform.TELEGRAM, chat_id=str(pk))
    return ChatRecord(pk=pk, chat=chat, cursor=0, next_digest_at=None)


def queues(
    *,
    window: int = 1,
    claim_batch: int = 10,
    on_broadcast_row: Callable[[int], Awaitable[None]] | None = None,
) -> Queues:
    # The renderer reads the database only to render a row claimed without its pages.
    return Queues(
        renderer=Renderer(create_async_engine("sqlite+aiosqlite://")),
        claim_batch=claim_batch,
        window=lambda: window,
        on_broadcast_row=on_broadcast_row,
    )


async def test_chats_are_taken_when_ready_one_worker_at_a_time() -> None:
    q = queues()
    q.add(row(1, 7), record(7))
    q.add(row(2, 7), None)  # the chat has its queue: no record needed
    q.add(row(3, 8), record(8))
    q.add(row(4, 9), None)  # a chat with neither is left out
    assert q.in_memory == 3 and sorted(q.chats) == [7, 8]

    first = await q.take()
    second = await q.take()
    assert first is not None and second is not None
    assert [first.record.pk, second.record.pk] == [7, 8] and first.busy
    assert [r.id for r in first.rows] == [1, 2]

    q.pop(first)  # its first row sent
    first.ready_at = time.monotonic() + 0.05  # the chat's interval
    q.put_back(first)
    assert not first.busy and q.in_memory == 2
    again = await asyncio.wait_for(q.take(), timeout=1)
    assert again is first and [r.id for r in again.rows] == [2]

    q.clear(second)
    q.put_back(second)  # no rows left: out of memory
    assert 8 not in q.chats and q.in_memory == 1


async def test_a_stop_ends_the_wait_for_a_ready_chat() -> None:
    q = queues()
    waiting = asyncio.create_task(q.take())
    await asyncio.sleep(0)
    q.stop()
    assert await asyncio.wait_for(waiting, timeout=1) is None
    assert q.claim_wake.is_set()


def test_the_low_water_mark_follows_the_window_and_wakes_the_claimer() -> None:
    q = queues(window=40, claim_batch=10)
    q.mark_low_water()
    assert q.low_water == 80 and q.claim_wake.is_set()  # two rows for every worker

    q = queues(window=1, claim_batch=10)
    for n in range(6):
        q.add(row(n, 7), record(7))
    q.mark_low_water()
    assert q.low_water == 5 and not q.claim_wake.is_set()
    queue = q.chats[7]
    q.pop(queue)
    q.pop(queue)
    assert q.in_memory == 4 and q.claim_wake.is_set()  # below the mark: claim more


async def test_a_broadcast_is_reported_once_none_of_its_rows_is_held() -> None:
    reported: list[int] = []

    async def progressed(broadcast_id: int) -> None:
        reported.append(broadcast_id)

    q = queues(on_broadcast_row=progressed)
    q.add(row(1, 7, broadcast=5), record(7))
    q.add(row(2, 8, broadcast=5), record(8))
    q.pop(q.chats[7])
    await q.broadcasts_progressed([5])
    assert reported == []  # a row of it is still in memory
    q.pop(q.chats[8])
    await q.broadcasts_progressed([5, None])
    assert reported == [5]


def test_rows_given_back_leave_and_rows_claimed_meanwhile_stay() -> None:
    # A chat gives its first row back to the outbox; meanwhile the claimer added another
    # row, and the same row claimed anew (another copy, the same id). Only the copy given
    # back leaves memory, and the count of rows held stays true.
    q = queues()
    given_back = row(1, 7)
    q.add(given_back, record(7))
    queue = q.chats[7]
    q.add(row(2, 7), None)
    again = row(1, 7)
    q.add(again, None)
    assert q.in_memory == 3
    q.clear(queue, [given_back])
    assert [r.id for r in queue.rows] == [2, 1] and queue.rows[1] is again
    assert q.in_memory == 2
    q.clear(queue)
    assert not queue.rows and q.in_memory == 0
