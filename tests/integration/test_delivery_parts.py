"""The parts of the delivery engine, each alone through its public interface, on SQLite and
PostgreSQL: the claimer (``bot.delivery.claims.Claimer``) fills the chats' queues from the
outbox, sweeps the claims of a process that is gone and gives its own back; the failure
policy (``bot.delivery.retries.FailurePolicy``) records what a failed send calls for on the
row and the chat, and takes out of memory the rows that leave it."""

from __future__ import annotations

import asyncio
import datetime as dt
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace

from sqlalchemy import event, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.delivery.claims import REQUEUE_HOLD_SECONDS, Claimer
from bot.delivery.queues import ChatQueue, Queues
from bot.delivery.recording import DatabaseHealth
from bot.delivery.rendering import Renderer
from bot.delivery.retries import FailurePolicy
from bot.delivery.sender import Attempt, BaseSender
from bot.errors import (
    ChatGone,
    OutcomeUnknown,
    PermanentError,
    PlatformAuthFailed,
    RateLimited,
    TransientError,
)
from bot.models import ChatSettings, ChatState, Outgoing, Platform
from bot.payloads import Notice
from bot.store import chats as chat_store
from bot.store import queueing
from bot.store.schema import chats as chats_table
from bot.store.schema import outbox as outbox_table
from bot.util import utcnow


class Unsent(BaseSender):
    """A platform the failure policy reads (its pacing, its re-sends); nothing is sent."""

    platform = Platform.TELEGRAM
    rate_per_second = None

    def __init__(self) -> None:
        self.authorized = asyncio.Event()

    def interval(self, chat: ChatSettings) -> float:
        return 0.0

    async def wait_authorized(self) -> None:
        await self.authorized.wait()

    async def send(
        self, chat_id: str, message: Outgoing, *, thread: str | None, attempt: Attempt | None = None
    ) -> str | None:
        raise AssertionError("the parts under test send nothing")


async def queued(engine: AsyncEngine, chat_id: str, texts: Iterable[str]) -> int:
    """A Telegram chat with a notice queued for each text; its pk."""
    async with engine.begin() as conn:
        record = await chat_store.ensure(
            conn, defaults=ChatSettings(platform=Platform.TELEGRAM, chat_id=chat_id)
        )
        now = utcnow()
        await queueing.enqueue(
            conn,
            [
                queueing.row_values(
                    chat_pk=record.pk,
                    platform=Platform.TELEGRAM.value,
                    kind="notice",
                    payload=Notice(text=text),
                    now=now,
                )
                for text in texts
            ],
        )
    return record.pk


async def rows(engine: AsyncEngine) -> list[dict[str, object]]:
    async with engine.connect() as conn:
        found = await conn.execute(select(outbox_table).order_by(outbox_table.c.id))
        return [dict(row) for row in found.mappings()]


def parts(
    engine: AsyncEngine, *, worker_id: str = "host:1:test", platforms: Iterable[Platform] = ()
) -> tuple[Queues, Claimer]:
    queues = Queues(renderer=Renderer(engine), claim_batch=10, window=lambda: 1)
    claimer = Claimer(
        engine=engine,
        queues=queues,
        health=DatabaseHealth(),
        claim_batch=10,
        platforms=lambda: list(platforms) or [Platform.TELEGRAM],
        worker_id=worker_id,
    )
    return queues, claimer


def gone_worker() -> str:
    """The worker id of a process of this host that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return f"{socket.gethostname()}:{child.pid}:gone"


# The claimer ----------------------------------------------------------------------------


async def test_the_claimer_queues_due_rows_per_chat(engine: AsyncEngine) -> None:
    first = await queued(engine, "1", ["a", "b"])
    second = await queued(engine, "2", ["c"])
    queues, claimer = parts(engine, worker_id="host:1:claimer")

    assert await claimer.claim() == 3

    assert sorted(queues.chats) == [first, second]
    assert [r.content() for r in queues.chats[first].rows] == [Notice("a"), Notice("b")]
    assert queues.in_memory == 3
    assert {(r["status"], r["claimed_by"]) for r in await rows(engine)} == {
        ("sending", "host:1:claimer")
    }
    # Claimed rows are not claimed again; the chat ready first is taken, one worker at a time.
    assert await claimer.claim() == 0
    taken = await queues.take()
    assert taken is not None and taken.busy and taken.record.pk in (first, second)


async def test_the_claimer_claims_only_for_the_platforms_it_is_given(engine: AsyncEngine) -> None:
    await queued(engine, "1", ["a"])
    queues, claimer = parts(engine, platforms=[Platform.SLACK])
    assert await claimer.claim() == 0
    assert queues.chats == {} and queues.in_memory == 0
    assert [r["status"] for r in await rows(engine)] == ["queued"]


async def test_the_claims_of_a_process_that_is_gone_are_requeued_and_held_back(
    engine: AsyncEngine,
) -> None:
    await queued(engine, "1", ["a", "b"])
    _, dead = parts(engine, worker_id=gone_worker())
    assert await dead.claim() == 2
    _, live = parts(engine, worker_id="host:1:live")

    before = utcnow()
    await live.requeue_stale()

    found = await rows(engine)
    assert [(r["status"], r["claimed_by"]) for r in found] == [("queued", None)] * 2
    for row in found:
        not_before = row["not_before"]
        assert isinstance(not_before, dt.datetime)
        held_back = (not_before.replace(tzinfo=None) - before.replace(tzinfo=None)).total_seconds()
        assert REQUEUE_HOLD_SECONDS - 1 <= held_back <= REQUEUE_HOLD_SECONDS + 1
    # Not due yet: the message in flight when its worker died may have just arrived.
    assert await live.claim() == 0


async def test_a_live_workers_claims_are_left_alone_and_given_back_at_its_stop(
    engine: AsyncEngine,
) -> None:
    await queued(engine, "1", ["a"])
    _, claimer = parts(engine, worker_id=f"{socket.gethostname()}:1:init")
    assert await claimer.claim() == 1
    _, other = parts(engine, worker_id="host:2:other")
    await other.requeue_stale()
    assert [r["status"] for r in await rows(engine)] == ["sending"]

    await claimer.release()
    assert [(r["status"], r["claimed_by"]) for r in await rows(engine)] == [("queued", None)]


async def test_a_draining_claimer_ends_once_nothing_is_due_or_held(engine: AsyncEngine) -> None:
    await queued(engine, "1", ["a", "b"])
    queues, claimer = parts(engine)
    run = asyncio.create_task(claimer.run(only_chats=None, only_broadcast=None, drain=True))
    try:
        queue = await asyncio.wait_for(queues.take(), timeout=5)
        assert queue is not None and len(queue.rows) == 2
        assert not run.done()  # rows held: the drain goes on
        while queue.rows:
            queues.pop(queue)  # sent, as far as memory is concerned
        await asyncio.wait_for(run, timeout=5)
    finally:
        run.cancel()
    assert queues.in_memory == 0


# The failure policy ---------------------------------------------------------------------


@dataclass
class Claimed:
    """A chat's rows claimed into memory, its queue taken as a worker takes it, and a
    failure policy over them."""

    queues: Queues
    claimer: Claimer
    sender: Unsent
    policy: FailurePolicy
    queue: ChatQueue


async def claimed(engine: AsyncEngine, *texts: str) -> Claimed:
    await queued(engine, "1", texts)
    queues, claimer = parts(engine)
    assert await claimer.claim() == len(texts)
    queue = await queues.take()
    assert queue is not None
    sender = Unsent()
    policy = FailurePolicy(
        engine=engine,
        queues=queues,
        health=DatabaseHealth(),
        senders={Platform.TELEGRAM: sender},
        backoff_base=30.0,
    )
    return Claimed(queues, claimer, sender, policy, queue)


async def test_a_permanent_error_fails_the_message_and_the_chat_goes_on(
    engine: AsyncEngine,
) -> None:
    it = await claimed(engine, "a", "b")
    await it.policy.apply(it.queue, PermanentError("message is too long", code="bad_request"))

    found = await rows(engine)
    assert [(r["status"], r["attempts"]) for r in found] == [("failed", 1), ("sending", 0)]
    assert found[0]["last_error"] == "message is too long"
    assert it.policy.failed == 1 and len(it.queue.rows) == 1 and it.queues.in_memory == 1


async def test_a_transient_error_puts_the_message_back_with_a_backoff(
    engine: AsyncEngine,
) -> None:
    it = await claimed(engine, "a")
    before = utcnow()
    await it.policy.apply(it.queue, TransientError("502 Bad Gateway"))

    (row,) = await rows(engine)
    assert (row["status"], row["attempts"], row["claimed_by"]) == ("queued", 1, None)
    not_before = row["not_before"]
    assert isinstance(not_before, dt.datetime)
    waited = (not_before.replace(tzinfo=None) - before.replace(tzinfo=None)).total_seconds()
    assert 30 * 0.8 - 1 <= waited <= 30 * 1.2 + 1  # the first backoff, with its jitter
    assert not it.queue.rows and it.queues.in_memory == 0 and it.policy.failed == 0


async def test_a_short_rate_limit_keeps_the_message_in_memory(engine: AsyncEngine) -> None:
    it = await claimed(engine, "a")
    await it.policy.apply(it.queue, RateLimited("Too Many Requests", retry_after=2.0))

    assert len(it.queue.rows) == 1 and it.queues.in_memory == 1
    assert 1.5 <= it.queue.ready_at - time.monotonic() <= 2.0
    assert [(r["status"], r["attempts"]) for r in await rows(engine)] == [("sending", 0)]


async def test_a_chat_that_is_gone_stops_and_all_its_messages_fail(engine: AsyncEngine) -> None:
    it = await claimed(engine, "a", "b", "c")
    await it.policy.apply(it.queue, ChatGone("bot was blocked by the user"))

    assert [r["status"] for r in await rows(engine)] == ["failed"] * 3
    async with engine.connect() as conn:
        state = (await conn.execute(select(chats_table.c.state))).scalar_one()
    assert state == ChatState.INACTIVE.value
    assert it.policy.failed == 3 and not it.queue.rows and it.queues.in_memory == 0


async def test_refused_credentials_give_the_messages_back_and_pause_the_platform(
    engine: AsyncEngine,
) -> None:
    it = await claimed(engine, "a", "b")
    await it.policy.apply(it.queue, PlatformAuthFailed("Unauthorized", code="unauthorized"))

    assert [(r["status"], r["attempts"]) for r in await rows(engine)] == [("queued", 0)] * 2
    assert not it.queue.rows and it.queues.in_memory == 0
    assert it.policy.paused(Platform.TELEGRAM)
    it.queues.claim_wake.clear()
    it.sender.authorized.set()  # the credentials work again
    await asyncio.wait_for(it.queues.claim_wake.wait(), timeout=5)
    assert not it.policy.paused(Platform.TELEGRAM) and it.policy.end_pauses() == []


async def test_a_stop_ends_the_wait_for_credentials(engine: AsyncEngine) -> None:
    it = await claimed(engine, "a")
    await it.policy.apply(it.queue, PlatformAuthFailed("Unauthorized", code="unauthorized"))
    (wait,) = it.policy.end_pauses()
    wait.cancel()
    assert not it.policy.paused(Platform.TELEGRAM)


async def test_a_send_with_no_answer_is_sent_again_once_then_held(engine: AsyncEngine) -> None:
    it = await claimed(engine, "a")
    await it.policy.apply(it.queue, OutcomeUnknown("timed out"))
    (row,) = await rows(engine)
    assert (row["status"], row["unknown_sends"]) == ("queued", 1)
    assert "telegram" in it.policy.slow()

    async with engine.begin() as conn:  # the re-send is due now
        await conn.execute(outbox_table.update().values(not_before=utcnow()))
    it.queues.put_back(it.queue)
    assert await it.claimer.claim() == 1
    again = await it.queues.take()
    assert again is not None and again.rows[0].unknown_sends == 1
    await it.policy.apply(again, OutcomeUnknown("timed out"))

    (row,) = await rows(engine)
    assert row["status"] == "held" and it.policy.held == 1 and it.queues.in_memory == 0


# Claims that race the workers -------------------------------------------------------------


async def until_suspended_on_the_database(task: asyncio.Task[object]) -> None:
    """Let ``task`` run up to its first wait on the database (a driver's thread or socket),
    where the engine's workers can run meanwhile."""
    for _ in range(3):
        await asyncio.sleep(0)
    assert not task.done()


async def test_a_chat_whose_queue_empties_during_a_claim_gets_its_claimed_rows(
    engine: AsyncEngine,
) -> None:
    # The chat has a queue when the claim starts; its worker finishes the last row (the
    # queue leaves memory) while the claim reads the chats of its batch. The claimed row
    # still joins a queue: claimed and held nowhere, it would be sent by no one until the
    # process stopped.
    pk = await queued(engine, "1", ["a"])
    queues, claimer = parts(engine)
    assert await claimer.claim() == 1
    busy = await queues.take()
    assert busy is not None
    await queued(engine, "1", ["b"])
    other = await queued(engine, "2", ["c"])  # a chat not in memory: the chats are read

    def worker_finishes(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        if "FROM chats" in statement and pk in queues.chats:
            queues.pop(busy)  # "a" sent
            queues.put_back(busy)  # no rows left: the chat leaves memory

    event.listen(engine.sync_engine, "before_cursor_execute", worker_finishes)
    try:
        assert await claimer.claim() == 2
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", worker_finishes)
    assert [r.content() for r in queues.chats[pk].rows] == [Notice("b")]
    assert [r.content() for r in queues.chats[other].rows] == [Notice("c")]
    assert queues.in_memory == 2


async def test_rows_claimed_while_a_chat_gives_its_rows_back_stay_in_memory(
    engine: AsyncEngine,
) -> None:
    # Refused credentials give the chat's rows back to the outbox; a row the claimer adds to
    # the chat meanwhile was not written back, so it stays in memory, counted, to be sent.
    it = await claimed(engine, "a")
    await queued(engine, "1", ["b"])
    # The claim is under way when the give-back takes the chat's rows; it adds "b" to the
    # chat's queue before the give-back's write ends.
    claim = asyncio.create_task(it.claimer.claim())
    await until_suspended_on_the_database(claim)
    give_back = asyncio.create_task(it.policy.give_back(it.queue, reason="credentials refused"))
    await until_suspended_on_the_database(give_back)
    assert await claim == 1
    await give_back
    assert [r.content() for r in it.queue.rows] == [Notice("b")]
    assert it.queues.in_memory == 1
    found = await rows(engine)
    assert [(r["status"], r["claimed_by"]) for r in found] == [
        ("queued", None),
        ("sending", "host:1:test"),
    ]


async def test_rows_claimed_while_a_message_is_held_stay_in_memory_and_wait(
    engine: AsyncEngine,
) -> None:
    # A message held (no answer twice) puts the chat's other rows back for 5 minutes; a row
    # claimed for the chat while that is written stays in memory and waits as long.
    it = await claimed(engine, "a")
    async with engine.begin() as conn:  # "a" had one send with no answer already
        await conn.execute(outbox_table.update().values(unknown_sends=1))
    it.queue.rows[0] = replace(it.queue.rows[0], unknown_sends=1)
    await queued(engine, "1", ["b"])
    claim = asyncio.create_task(it.claimer.claim())
    await until_suspended_on_the_database(claim)
    hold = asyncio.create_task(it.policy.apply(it.queue, OutcomeUnknown("timed out")))
    await until_suspended_on_the_database(hold)
    assert await claim == 1
    await hold
    assert it.policy.held == 1
    assert [r.content() for r in it.queue.rows] == [Notice("b")]
    assert it.queues.in_memory == 1
    assert it.queue.ready_at >= time.monotonic() + 290  # waits as the chat's others do
    assert [r["status"] for r in await rows(engine)] == ["held", "sending"]
