"""Recording sends: their durable records, several to a transaction (group commit), and
the delivery engine's view of the database's health while it is away.

Every write of the engine goes through :func:`durably` or :class:`Records`: while the
database is away (stopped, restarted, its connections cut, its disk full) what failed is
tried again, so work resumes within ``DB_RETRY_MAX_SECONDS`` of it answering again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from bot import dberrors
from bot.store import outbox
from bot.store import pages as page_store

log = logging.getLogger("bot.delivery")

# While other sends are in flight, a send's record waits up to this long for theirs, to share
# one transaction with them (group commit): a transaction costs more CPU than a send. A
# worker still takes its next message only once the record is durable. Every answered send
# waiting here is one a crash sends twice (neither platform has an idempotency key): at
# 200/s, 250 ms let a batch fill to RECORD_BATCH, and 23-38 chats of a 300-chat fan-out
# killed midway got the message twice, of which the 19-20 in flight (``bench/crash.py``).
RECORD_WINDOW_SECONDS = 0.01
# ... or until this many records are waiting: at high rates the window is not waited out.
# At 1,000/s a batch of 16 fills in 16 ms; smaller batches cost about 0.06-0.1 ms of CPU a
# message more (more transactions).
RECORD_BATCH = 16

# The database away (stopped, restarted, its connections cut, its disk full): what failed is
# tried again after this long, doubling up to the most, so work resumes within that much of
# the database answering again.
DB_RETRY_FIRST_SECONDS = 0.5
DB_RETRY_MAX_SECONDS = 5.0


class Records:
    """Durable records of sends, several to a transaction (group commit).

    :meth:`sent` and :meth:`part_sent` return once their record is committed, so a worker
    never takes its next message before its last one is recorded: after a crash, at most
    the one message each worker had in flight or waiting here can be sent again, as with a
    transaction per send. A record waits up to ``window`` seconds for the records of other
    sends in flight (``in_flight`` counts them, its own included) to commit with them, and
    no longer once ``batch`` records are waiting or every send in flight has one waiting.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        window: float,
        batch: int,
        in_flight: Callable[[], int],
        health: DatabaseHealth,
    ) -> None:
        self._engine = engine
        self._health = health
        self._window = window
        self._batch = batch
        self._in_flight = in_flight
        self._lock = asyncio.Lock()
        self._pending: list[tuple[int, int | None, str | None, asyncio.Future[None]]] = []
        self._full = asyncio.Event()  # no other record is worth waiting for

    async def sent(self, row_id: int) -> None:
        await self._record(row_id, None, None)

    async def part_sent(self, row_id: int, *, parts_sent: int, thread_ref: str | None) -> None:
        await self._record(row_id, parts_sent, thread_ref)

    async def _record(self, row_id: int, parts_sent: int | None, thread_ref: str | None) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((row_id, parts_sent, thread_ref, done))
        if not self._worth_waiting():
            self._full.set()
        async with self._lock:
            if not done.done():  # no earlier transaction took it: this task commits
                await self._commit()
        done.result()  # raises what the transaction raised

    async def flush(self) -> None:
        """Commit the records still waiting (their senders may have been cancelled)."""
        async with self._lock:
            if not self._pending:
                return
            try:
                await self._commit(wait=False)
            except Exception as exc:
                if not dberrors.is_outage(exc):
                    log.exception("could not record sends made before the stop")
                else:  # their claims expire, and the rows are sent again (in flight)
                    log.warning(
                        "could not record %d sends made before the stop: %s",
                        len(self._pending) or 1,
                        dberrors.reason(exc),
                    )

    def _worth_waiting(self) -> bool:
        pending = len(self._pending)
        return pending < self._batch and self._in_flight() > pending

    async def _commit(self, *, wait: bool = True) -> None:
        if wait and self._window > 0 and self._worth_waiting():
            self._full.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._full.wait(), self._window)
        batch, self._pending = self._pending, []
        delay = DB_RETRY_FIRST_SECONDS
        while True:
            try:
                async with self._engine.begin() as conn:
                    sent = [row_id for row_id, parts, _, _ in batch if parts is None]
                    await outbox.sent_many(conn, row_ids=sent, now=page_store.utcnow())
                    await outbox.parts_sent_many(
                        conn, [(row_id, n, ref) for row_id, n, ref, _ in batch if n is not None]
                    )
                break
            except asyncio.CancelledError:
                self._pending[:0] = batch  # the next committer writes them (the writes repeat)
                raise
            except Exception as exc:
                if wait and dberrors.is_outage(exc):
                    # The messages were sent: their records wait here, in memory, for the
                    # database (the rows stay claimed by this worker meanwhile), so they
                    # are not sent again. Their senders take nothing new until then.
                    self._health.failed(exc, doing="recording sends")
                    try:
                        await asyncio.sleep(delay)
                    except asyncio.CancelledError:
                        self._pending[:0] = batch
                        raise
                    delay = min(delay * 2, DB_RETRY_MAX_SECONDS)
                    batch += self._pending  # records made meanwhile go with them
                    self._pending = []
                    continue
                for *_, future in batch:
                    if wait:
                        future.set_exception(exc)
                    else:  # a flush at the stop: their senders are gone
                        future.cancel()
                raise
        self._health.ok()
        for *_, future in batch:
            future.set_result(None)


class DatabaseHealth:
    """Whether the delivery engine's uses of the database fail, and how: what ``/healthz``
    reports while deliveries cannot make progress.

    Each use (``doing``: recording sends, claiming messages...) is cleared by its own
    success only: a claim that commits says nothing of records that cannot be written
    (a full disk lets small writes through, a claimer with enough rows in memory asks
    nothing), so it never makes a stalled engine look healthy. A record that commits
    clears them all: sends are being recorded, deliveries progress.
    """

    def __init__(self) -> None:
        self._failing: dict[str, str] = {}  # what failed -> the database's error, in order
        self.since = 0.0  # time.monotonic() of the first failure of the outage

    @property
    def problem(self) -> str | None:
        for doing, reason in self._failing.items():
            return f"{doing}: {reason}"
        return None

    def failed(self, exc: BaseException, *, doing: str) -> None:
        if not self._failing:
            self.since = time.monotonic()
            log.warning("database unavailable while %s: %s", doing, dberrors.reason(exc))
        self._failing[doing] = dberrors.reason(exc)

    def ok(self, *doing: str) -> None:
        """Those uses succeeded (all of them when none is named)."""
        if not self._failing:
            return
        for name in doing or tuple(self._failing):
            self._failing.pop(name, None)
        if not self._failing:
            log.info("database available again after %.1f s", time.monotonic() - self.since)


async def durably(
    write: Callable[[], Awaitable[None]], *, health: DatabaseHealth, doing: str
) -> None:
    """Run ``write`` (one transaction) until it commits: while the database is away it
    is tried again, after ``DB_RETRY_FIRST_SECONDS`` doubling up to the most. A stop
    cancels the wait (the engine's shutdown grace)."""
    delay = DB_RETRY_FIRST_SECONDS
    while True:
        try:
            await write()
        except Exception as exc:
            if not dberrors.is_outage(exc):
                raise
            health.failed(exc, doing=doing)
            await asyncio.sleep(delay)
            delay = min(delay * 2, DB_RETRY_MAX_SECONDS)
            continue
        health.ok(doing)
        return
