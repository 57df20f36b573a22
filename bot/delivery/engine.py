"""Delivery: the outbox worker, with the platforms' rate limits and failure rules.

Rows are claimed from the outbox in batches and queued in memory per chat. Worker tasks
take whichever chat is ready first (a heap on the time its per-chat limit allows the next
message), wait for the platform's overall pace, send one platform message, and record it
before taking the next. So a chat never gets two messages faster than its limit, the
platform never gets more than its cap, and one slow or rate-limited chat holds up no one.

Failure rules (``bot.errors`` is the vocabulary; each sender translates its library's
errors into it):

- ``RateLimited``: that chat waits ``retry_after``; the message is sent then, never dropped.
- ``TransientError`` (5xx, timeout, connection): back to the queue with exponential backoff
  and jitter; after ``MAX_ATTEMPTS`` attempts (about an hour) it is marked failed.
- ``ChatGone``: the chat becomes inactive and nothing more is sent to it.
- ``NotInChannel`` (Slack): the chat is paused until someone invites the bot and resumes.
- ``ChatMigrated``: the chat takes its new id and the message goes there at once.
- ``PermanentError``: this message is marked failed; the chat stays as it is.
- ``PlatformAuthFailed``: the platform refused the bot's credentials. Nothing more is sent
  to that platform: its messages go back to the queue as they were (no attempt counted, no
  chat changed) and none of its messages are claimed until the sender's
  ``wait_authorized`` returns (by default, ``bot.delivery.sender.AUTH_PAUSE_SECONDS`` later).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import heapq
import itertools
import logging
import os
import random
import socket
import time
import uuid
from collections import Counter, OrderedDict, deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from prometheus_client import Counter as SentCounter
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import dberrors, metrics, payloads, render
from bot.delivery import failures
from bot.delivery.failures import Outcome
from bot.delivery.pacing import PER_CHAT_MARGIN_SECONDS, Pace, Pacing, written_at
from bot.delivery.sender import Sender
from bot.errors import (
    DeliveryError,
    RateLimited,
    TransientError,
)
from bot.matching import digest as digest_stage
from bot.models import ChatSettings, ChatState, Outgoing, Page, Platform
from bot.render import toggle
from bot.store import chats as chat_store
from bot.store import merges as merge_store
from bot.store import outbox
from bot.store import pages as page_store
from bot.store.chats import ChatRecord
from bot.store.engine import reader
from bot.store.outbox import OutboxRow

log = logging.getLogger("bot.delivery")

MAX_ATTEMPTS = 8
# 30 s doubling: retries at about 0.5, 1, 2, 4, 8, 16 and 32 minutes, 8 attempts in ~1 hour.
BACKOFF_BASE_SECONDS = 30.0
BACKOFF_JITTER = 0.2
# A worker that stops refreshing its claims for this long is presumed dead.
CLAIM_TTL_SECONDS = 120.0
# How often a running worker looks for claims of dead workers: those of a process of this
# host that is gone are requeued at once, others once their claim is older than the TTL.
SWEEP_EVERY_SECONDS = 5.0
# A requeued message waits this long (the longest per-chat interval, a Telegram group's):
# the one its dead worker had in flight may have reached the chat just before.
REQUEUE_HOLD_SECONDS = 3.0
TOUCH_EVERY_SECONDS = 30.0
# The claimer looks at the outbox at least this often (rows come due by their ``not_before``);
# new rows and a shortage in memory wake it at once.
CLAIM_EVERY_SECONDS = 1.0
# A 429 asking for a longer wait sends the message back to the queue instead of memory.
MAX_INLINE_WAIT_SECONDS = 60.0
# Bounded shutdown: in-flight sends get this long to finish; the rest stays queued.
SHUTDOWN_GRACE_SECONDS = 10.0
# While other sends are in flight, a send's record waits up to this long for theirs, to share
# one transaction with them (group commit): a transaction cost more CPU than a send, and at
# low rates, where few records are under way, 50 ms made one for every two sends. A worker
# still takes its next message only once the record is durable.
RECORD_WINDOW_SECONDS = 0.25
# ... or until this many records are waiting: at high rates the window is not waited out.
# It bounds what a crash sends twice: the sends in flight (about cap x round trip) and at
# most this many answered sends not yet recorded. At 200/s and 50 ms, 64 let 57 chats of a
# 300-chat fan-out killed midway get the message twice, 16 let 16 (``bench/crash.py``); at
# 1,000/s it costs about 0.06-0.1 ms of CPU a message more (more transactions).
RECORD_BATCH = 16
# The in-flight window: how many sends may be under way at once. It starts at the
# ``concurrency`` given (the floor) and follows cap x the measured time a send holds a worker
# (the request and its record), with this much to spare, up to the ceiling. At 100 ms a cap
# of 1,000/s needs about 150; 64 fixed workers held one process to 640/s at best.
WINDOW_HEADROOM = 1.5
MAX_IN_FLIGHT = 1024
# The measured time per send is a moving average: each new send weighs this much.
LATENCY_WEIGHT = 0.05
# Rendered digests kept for later claims (a claim's own are kept with it): chats with the
# same language, filter and pages get the same messages, and a claim holds 500 rows at most.
RENDERED_KEPT = 4096
# The database away (stopped, restarted, its connections cut, its disk full): what failed is
# tried again after this long, doubling up to the most, so work resumes within that much of
# the database answering again.
DB_RETRY_FIRST_SECONDS = 0.5
DB_RETRY_MAX_SECONDS = 5.0
# A one-shot command (``digest --now``, ``broadcast``) rides out an outage this long, then
# gives up with the database's error (the service rides out any).
ONE_SHOT_OUTAGE_SECONDS = 60.0


def backoff(attempt: int, *, base_seconds: float = BACKOFF_BASE_SECONDS) -> float:
    """Seconds before attempt ``attempt + 1``: exponential with +-20 % jitter."""
    base = base_seconds * float(2 ** max(0, attempt - 1))
    return base * (1 + random.uniform(-BACKOFF_JITTER, BACKOFF_JITTER))


@dataclass(eq=False, slots=True)
class _ChatQueue:
    record: ChatRecord
    rows: deque[OutboxRow] = field(default_factory=deque)
    parts: list[Outgoing] | None = None
    next_part: int = 0
    thread: str | None = None
    ready_at: float = 0.0
    busy: bool = False
    started: float = 0.0  # when the send under way began (0: none), for the window


@dataclass(eq=False, slots=True)
class _Claimed:
    """What the rows of one claim share: their pages, as they were at the claim, and the
    messages rendered from them (chats with the same language and filter get the same)."""

    pages: Mapping[int, Page]
    rendered: dict[tuple[object, ...], tuple[Outgoing, ...]] = field(default_factory=dict)


class _Records:
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
        health: _DatabaseHealth,
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


class _DatabaseHealth:
    """Whether the delivery engine's last use of the database failed, and how: what
    ``/healthz`` reports while deliveries cannot make progress."""

    def __init__(self) -> None:
        self.problem: str | None = None
        self.since = 0.0  # time.monotonic() of the first failure of the outage

    def failed(self, exc: BaseException, *, doing: str) -> None:
        if self.problem is None:
            self.since = time.monotonic()
            log.warning("database unavailable while %s: %s", doing, dberrors.reason(exc))
        self.problem = f"{doing}: {dberrors.reason(exc)}"

    def ok(self) -> None:
        if self.problem is not None:
            log.info("database available again after %.1f s", time.monotonic() - self.since)
            self.problem = None


class Delivery:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        senders: Mapping[Platform, Sender],
        concurrency: int = 64,
        max_in_flight: int = MAX_IN_FLIGHT,
        claim_batch: int = 500,
        worker_id: str | None = None,
        on_broadcast_row: Callable[[int], Awaitable[None]] | None = None,
        backoff_base: float = BACKOFF_BASE_SECONDS,
        on_auth_failure: Callable[[Platform, str], Awaitable[None]] | None = None,
    ) -> None:
        self._engine = engine
        self._on_auth_failure = on_auth_failure
        self._on_broadcast_row = on_broadcast_row
        self._senders = dict(senders)
        # Everything sent to a platform shares its pacing: a sender with ``pacing`` (the
        # channels send replies through the same one) brings its own. A sender with
        # ``pace_key`` (Slack installed in many workspaces) has its cap per key: one Pace
        # per workspace, at the platform's rate.
        self._pacing = {p: _pacing_of(s) for p, s in self._senders.items()}
        self._pace = {p: pacing.pace() for p, pacing in self._pacing.items()}
        self._rates = {p: s.rate_per_second for p, s in self._senders.items()}
        self._concurrency = concurrency
        self._max_in_flight = max(concurrency, max_in_flight)
        self._workers: set[asyncio.Task[None]] = set()
        # Seconds a send holds a worker, per platform (moving average), from which the
        # window is sized; no guess is made before the first send has been measured.
        self._send_seconds: dict[Platform, float] = {}
        self._claim_batch = claim_batch
        self._backoff_base = backoff_base
        self.worker_id = worker_id or new_worker_id()
        self._queues: dict[int, _ChatQueue] = {}
        self._claimed: dict[int, _Claimed] = {}  # by outbox row id, until it is rendered
        # Messages rendered, by what they were rendered from (the pages included), across
        # claims; the least recently used go first.
        self._rendered: OrderedDict[tuple[object, ...], tuple[Outgoing, ...]] = OrderedDict()
        self._in_flight = 0  # workers between taking a message and recording it
        self._health = _DatabaseHealth()
        self._records = _Records(
            engine,
            window=RECORD_WINDOW_SECONDS,
            batch=RECORD_BATCH,
            in_flight=lambda: self._in_flight,
            health=self._health,
        )
        self._heap: list[tuple[float, int, int]] = []
        self._seq = itertools.count()
        self._wake = asyncio.Event()
        self._claim_wake = asyncio.Event()
        self._stopping = False
        self._held = 0  # rows in memory
        self._low_water = 0  # fewer rows in memory than this: claim more
        # Rows of each broadcast in memory: the broadcast's progress is looked at when this
        # instance holds none of it any more, not after every row (one aggregate per row
        # would cost as much as the sends of a large broadcast).
        self._held_of: Counter[int] = Counter()
        self._only_broadcast: int | None = None
        self._paused: dict[Platform, asyncio.Task[None]] = {}  # refused credentials
        self._counters: dict[tuple[Platform, str], SentCounter] = {}
        self.sent = 0  # outbox rows completed by this instance
        self.failed = 0  # outbox rows that failed for good

    # Public -----------------------------------------------------------------------------

    @property
    def problem(self) -> str | None:
        """Why deliveries cannot make progress now (the database's error), or None."""
        return self._health.problem

    def notify(self) -> None:
        """New rows may be due (the planner just wrote some)."""
        self._claim_wake.set()

    def share_caps(self, replicas: int) -> None:
        """Several replicas send: each keeps to ``cap / replicas`` of every platform cap."""
        for platform, sender in self._senders.items():
            self._rates[platform] = (
                sender.rate_per_second / max(1, replicas) if sender.rate_per_second else None
            )
            self._pacing[platform].set_rate(self._rates[platform])

    async def run(self, stop: asyncio.Event) -> None:
        """Deliver until ``stop`` is set; then finish in-flight sends and release the rest.

        The database going away stops nothing: what failed is tried again until it answers.
        Raises only for a bug (the caller starts it again).
        """
        await self._requeue_stale()
        await self._serve(stop=stop, only_chats=None, drain=False)

    async def drain(
        self,
        *,
        chat_pks: Sequence[int] | None = None,
        broadcast: int | None = None,
        stop: asyncio.Event | None = None,
    ) -> None:
        """Deliver everything due now (for these chats, or of this broadcast); return when
        only later retries are left, or once ``stop`` is set. Used by ``digest --now`` and
        ``broadcast``."""
        self._only_broadcast = broadcast
        await self._serve(stop=stop or asyncio.Event(), only_chats=chat_pks, drain=True)

    # Engine -----------------------------------------------------------------------------

    async def _serve(
        self, *, stop: asyncio.Event, only_chats: Sequence[int] | None, drain: bool
    ) -> None:
        self._stopping = False
        self._workers.clear()
        self._grow(self._concurrency)
        claimer = asyncio.create_task(self._claimer(only_chats=only_chats, drain=drain))
        stopper = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait({claimer, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._stopping = True
            self._wake.set()
            self._claim_wake.set()
            done, pending = await asyncio.wait(self._workers, timeout=SHUTDOWN_GRACE_SECONDS)
            paused = list(self._paused.values())
            self._paused.clear()
            for task in (*pending, claimer, stopper, *paused):
                task.cancel()
            results = await asyncio.gather(
                *pending, claimer, stopper, *paused, return_exceptions=True
            )
            failure = results[len(pending)]
            # Sends that were made but whose records a cancelled worker was waiting on are
            # recorded now, so that releasing the claims below does not send them again.
            await self._records.flush()
            for task in done:
                if task.exception() is not None:
                    log.error("delivery worker failed", exc_info=task.exception())
            try:
                async with self._engine.begin() as conn:
                    released = await outbox.release_claims(conn, worker=self.worker_id)
            except Exception as exc:
                if not dberrors.is_outage(exc):
                    raise
                # They expire (CLAIM_TTL_SECONDS), or a replica of this host sees this
                # process gone, and they are sent then.
                log.warning("claims left to expire: %s", dberrors.reason(exc))
            else:
                if released:
                    log.info("left %d messages queued for later", released)
            self._queues.clear()
            self._heap.clear()
            self._claimed.clear()
            self._held = 0
            self._held_of.clear()
        if isinstance(failure, Exception):  # the claimer gave up (a bug, or a one-shot's outage)
            raise failure

    @property
    def window(self) -> int:
        """Sends that may be under way at once now (the number of workers)."""
        return len(self._workers)

    def _grow(self, size: int) -> None:
        while len(self._workers) < size and not self._stopping:
            task = asyncio.create_task(self._worker())
            task.add_done_callback(self._worker_ended)
            self._workers.add(task)

    def _worker_ended(self, task: asyncio.Task[None]) -> None:
        """A worker that failed is replaced at once: the window never shrinks behind a
        healthy ``/healthz``."""
        if self._stopping or task.cancelled() or task.exception() is None:
            return
        log.error("delivery worker failed; starting another", exc_info=task.exception())
        self._workers.discard(task)
        self._grow(len(self._workers) + 1)

    async def _durably(self, write: Callable[[], Awaitable[None]], *, doing: str) -> None:
        """Run ``write`` (one transaction) until it commits: while the database is away it
        is tried again, after ``DB_RETRY_FIRST_SECONDS`` doubling up to the most. A stop
        cancels the wait (``SHUTDOWN_GRACE_SECONDS``)."""
        delay = DB_RETRY_FIRST_SECONDS
        while True:
            try:
                await write()
            except Exception as exc:
                if not dberrors.is_outage(exc):
                    raise
                self._health.failed(exc, doing=doing)
                await asyncio.sleep(delay)
                delay = min(delay * 2, DB_RETRY_MAX_SECONDS)
                continue
            self._health.ok()
            return

    def _sent_counter(self, platform: Platform, kind: str) -> SentCounter:
        """``messages_sent_total`` of the platform and kind (looked up once, not per send)."""
        counter = self._counters.get((platform, kind))
        if counter is None:
            counter = self._counters[platform, kind] = metrics.MESSAGES_SENT.labels(
                platform.value, kind
            )
        return counter

    def _measured(self, platform: Platform, seconds: float) -> None:
        """A send of ``platform`` held its worker ``seconds``: widen the window if the caps
        now need more sends in flight than there are workers (it never narrows: an idle
        worker costs nothing but its wait)."""
        held = self._send_seconds.get(platform)
        self._send_seconds[platform] = (
            seconds if held is None else held + LATENCY_WEIGHT * (seconds - held)
        )
        needed = 0.0
        for name, hold in self._send_seconds.items():
            rate = self._pace[name].rate
            if rate is not None:  # each workspace of a platform paced per key has the rate
                needed += rate * max(1, self._pacing[name].keys) * hold * WINDOW_HEADROOM
        if needed > len(self._workers):
            self._grow(min(self._max_in_flight, int(needed) + 1))

    async def _requeue_stale(self) -> None:
        now = page_store.utcnow()
        cutoff = now - dt.timedelta(seconds=CLAIM_TTL_SECONDS)
        try:
            async with self._engine.begin() as conn:
                owners = await outbox.claim_owners(conn)
                dead = [owner for owner in owners if owner_is_dead(owner)]
                count = await outbox.requeue_stale(
                    conn,
                    claimed_before=cutoff,
                    dead_owners=dead,
                    not_before=now + dt.timedelta(seconds=REQUEUE_HOLD_SECONDS),
                )
        except Exception as exc:
            if not dberrors.is_outage(exc):
                raise
            self._health.failed(exc, doing="reclaiming messages")
            return  # the next sweep
        if count:
            log.warning("requeued %d messages claimed by a worker that stopped", count)

    async def _claimer(self, *, only_chats: Sequence[int] | None, drain: bool) -> None:
        last_touch = time.monotonic()
        last_sweep = time.monotonic()
        delay = DB_RETRY_FIRST_SECONDS
        away_since: float | None = None
        while not self._stopping:
            # After an outage this worker's claims are touched first: a replica sweeping
            # must not take them for those of a dead worker while their records wait.
            touch = away_since is not None or time.monotonic() - last_touch > TOUCH_EVERY_SECONDS
            try:
                got = await self._claim_and_touch(only_chats=only_chats, touch=touch)
            except Exception as exc:
                if not dberrors.is_outage(exc):
                    raise
                self._health.failed(exc, doing="claiming messages")
                now = time.monotonic()
                away_since = away_since if away_since is not None else now
                if drain and now - away_since > ONE_SHOT_OUTAGE_SECONDS:
                    raise
                self._claim_wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._claim_wake.wait(), timeout=delay)
                delay = min(delay * 2, DB_RETRY_MAX_SECONDS)
                continue
            self._health.ok()
            away_since, delay = None, DB_RETRY_FIRST_SECONDS
            if got is None:  # touched; the claim is the next turn
                last_touch = time.monotonic()
                continue
            if drain and got == 0 and self._held == 0:
                return
            now = time.monotonic()
            if not drain and now - last_sweep > SWEEP_EVERY_SECONDS:
                await self._requeue_stale()
                last_sweep = now
            if got and self._held < self._low_water:
                continue
            # Woken when rows are planned, when those in memory fall below the low water
            # mark or run out, and when a platform's credentials work again.
            self._claim_wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._claim_wake.wait(), timeout=CLAIM_EVERY_SECONDS)

    async def _claim_and_touch(
        self, *, only_chats: Sequence[int] | None, touch: bool
    ) -> int | None:
        """Claim more rows when fewer than the low water mark are in memory; first keep
        this worker's claims fresh when ``touch`` (then None is returned, and the claim
        waits for the next turn: the touch is what must not wait)."""
        if touch:
            async with self._engine.begin() as conn:
                await outbox.touch_claims(conn, worker=self.worker_id, now=page_store.utcnow())
            return None
        # Enough rows in memory to keep every worker of the window busy.
        low_water = self._low_water = max(self._claim_batch // 2, self.window * 2)
        if self._held < low_water:
            return await self._claim(only_chats=only_chats)
        return 0

    async def _claim(self, *, only_chats: Sequence[int] | None) -> int:
        platforms = [p.value for p in self._senders if p not in self._paused]
        if not platforms:
            return 0
        async with self._engine.begin() as conn:
            rows = await outbox.claim(
                conn,
                worker=self.worker_id,
                limit=self._claim_batch,
                now=page_store.utcnow(),
                platforms=platforms,
                only_chats=only_chats,
                only_broadcast=self._only_broadcast,
            )
            missing = sorted({r.chat_pk for r in rows} - self._queues.keys())
            records = await chat_store.get_many(conn, missing)
            # The pages of the whole batch in one go, not three queries for every message;
            # each message is rendered with its pages as they were when it was claimed.
            entries = {r.id: _pages_of(r) for r in rows}
            page_ids = {page_id for pages in entries.values() for page_id, _ in pages or ()}
            claimed = _Claimed(
                await page_store.load_pages(conn, sorted(page_ids)) if page_ids else {}
            )
        for row in rows:
            if entries[row.id] is not None:
                self._claimed[row.id] = claimed
            queue = self._queues.get(row.chat_pk)
            if queue is None:
                record = records.get(row.chat_pk)
                if record is None:
                    continue
                queue = self._queues[row.chat_pk] = _ChatQueue(record=record)
                self._schedule(queue, time.monotonic())
            queue.rows.append(row)
            self._held += 1
            if row.broadcast_id is not None:
                self._held_of[row.broadcast_id] += 1
        return len(rows)

    def _schedule(self, queue: _ChatQueue, at: float) -> None:
        queue.ready_at = at
        heapq.heappush(self._heap, (at, next(self._seq), queue.record.pk))
        self._wake.set()

    async def _take(self) -> _ChatQueue | None:
        while not self._stopping:
            now = time.monotonic()
            while self._heap and self._heap[0][0] <= now:
                _, _, pk = heapq.heappop(self._heap)
                queue = self._queues.get(pk)
                if queue is not None and not queue.busy and queue.rows:
                    queue.busy = True
                    return queue
            timeout = self._heap[0][0] - now if self._heap else None
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=timeout)
        return None

    async def _worker(self) -> None:
        while True:
            queue = await self._take()
            if queue is None:
                return
            self._in_flight += 1
            try:
                await self._send_next(queue)
            except Exception as exc:
                if not dberrors.is_outage(exc):
                    raise
                # A read before the send (the pages to render) found the database away:
                # the message was not sent, and waits in memory, no attempt counted.
                self._health.failed(exc, doing="reading pages to send")
                queue.ready_at = time.monotonic() + DB_RETRY_MAX_SECONDS
            finally:
                self._in_flight -= 1
                if queue.started:
                    self._measured(queue.record.chat.platform, time.monotonic() - queue.started)
                    queue.started = 0.0
                queue.busy = False
                if queue.rows:
                    self._schedule(queue, max(queue.ready_at, time.monotonic()))
                else:
                    self._queues.pop(queue.record.pk, None)

    async def _send_next(self, queue: _ChatQueue) -> None:
        """:meth:`_send_one`, and a bug in it fails that message alone; the database
        being away is the caller's to wait out."""
        try:
            await self._send_one(queue)
        except Exception as exc:  # a bug must not stop deliveries to everyone else
            if dberrors.is_outage(exc):
                raise
                log.exception("unexpected error while delivering", extra=_ctx(queue.record))
                if queue.rows:
                    await self._failed(queue, TransientError("internal error", code="internal"))

    async def _send_one(self, queue: _ChatQueue) -> None:
        row = queue.rows[0]
        chat = queue.record.chat
        sender = self._senders[chat.platform]
        if queue.parts is None:
            try:
                queue.parts = await self._render(queue.record, row)
            except payloads.PayloadError as exc:  # a row no version of the format reads
                await self._fail_row(queue, f"malformed payload: {exc}", code="payload")
                return
            queue.next_part = row.parts_sent
            queue.thread = row.thread_ref
        if queue.next_part >= len(queue.parts):
            await self._finish(queue)
            return
        part = queue.parts[queue.next_part]
        if chat.platform in self._paused:
            await self._hold(queue, reason="credentials refused")
            return
        # The chat's slot first (a reply to a command may have it), then the platform's
        # turn; the send is stamped when it is let go, and goes at once.
        slots = self._pacing[chat.platform].chats
        slot = _slot_key(sender, chat.chat_id)
        interval = sender.interval(chat)
        wait = slots.take(slot, interval=interval)
        if wait > 0:
            queue.ready_at = time.monotonic() + wait
            return
        try:
            went = await self._paced_send(sender, queue, part, slot=slot, interval=interval)
        except DeliveryError as exc:
            await self._failed(queue, exc)
            return
        if went is None:  # not begun (stopping): it stays queued for later
            return
        started, ref = went
        queue.ready_at = max(started + interval + PER_CHAT_MARGIN_SECONDS, time.monotonic())
        if queue.next_part == 0 and ref:
            queue.thread = ref
        queue.next_part += 1
        self._sent_counter(chat.platform, row.kind).inc()
        if queue.next_part >= len(queue.parts):
            await self._finish(queue)
        else:
            await self._records.part_sent(
                row.id, parts_sent=queue.next_part, thread_ref=queue.thread
            )

    async def _failed(self, queue: _ChatQueue, exc: DeliveryError) -> None:
        """Carry out :func:`bot.failures.decide` for the failed send of the first message."""
        chat = queue.record.chat
        decision = failures.decide(
            exc,
            attempts=queue.rows[0].attempts,
            max_attempts=MAX_ATTEMPTS,
            max_inline_wait=MAX_INLINE_WAIT_SECONDS,
        )
        match decision.outcome:
            case Outcome.HOLD:
                self._pause(self._senders[chat.platform])
                await self._hold(queue, reason=exc.reason)
                await self._auth_failed(chat.platform, exc.reason)
            case Outcome.WAIT:
                metrics.MESSAGES_RETRIED.labels(chat.platform.value, exc.code).inc()
                log.warning("rate limited for %.1fs", decision.delay, extra=_ctx(queue.record))
                queue.ready_at = time.monotonic() + (decision.delay or 0.0)
            case Outcome.RETRY:
                if isinstance(exc, RateLimited):
                    log.warning("rate limited for %.1fs", decision.delay, extra=_ctx(queue.record))
                await self._retry(queue, exc, count=decision.count_attempt, delay=decision.delay)
            case Outcome.MOVE:
                new_chat_id = decision.new_chat_id
                assert new_chat_id is not None

                async def migrate() -> None:
                    async with self._engine.begin() as conn:
                        await merge_store.migrate_id(
                            conn, pk=queue.record.pk, new_chat_id=new_chat_id
                        )

                await self._durably(migrate, doing="recording a chat's new id")
                log.info("chat migrated to %s", new_chat_id, extra=_ctx(queue.record))
                queue.record = replace(queue.record, chat=replace(chat, chat_id=new_chat_id))
                queue.ready_at = time.monotonic()
            case Outcome.STOP_CHAT:
                assert decision.chat_state is not None
                await self._chat_gone(queue, exc, state=decision.chat_state)
            case Outcome.FAIL:
                await self._fail_row(queue, decision.reason, code=exc.code)

    async def _paced_send(
        self, sender: Sender, queue: _ChatQueue, part: Outgoing, *, slot: str, interval: float
    ) -> tuple[float, str | None] | None:
        """Wait for the platform's turn and send ``part``, the chat's slot taken; return
        when it left and the platform's reference, or None if the engine stopped first."""
        chat = queue.record.chat
        started: float | None = None
        try:
            started = await self._pace_of(sender, chat).acquire()
            if self._stopping:
                started = None
                return None
            queue.started = started
            ref = await sender.send(
                chat.chat_id, part, thread=queue.thread if part.in_thread else None
            )
            started = written_at(started)  # the chat's next message keeps its distance
            return started, ref
        finally:
            if started is not None:
                started = written_at(started)
            self._pacing[chat.platform].chats.left(slot, at=started, interval=interval)

    def _pace_of(self, sender: Sender, chat: ChatSettings) -> Pace:
        """The platform's pace, or that of the chat's workspace when the sender has one."""
        return self._pacing[chat.platform].pace(sender.pace_key(chat.chat_id))

    async def _render(self, record: ChatRecord, row: OutboxRow) -> list[Outgoing]:
        chat = record.chat
        content = row.content()
        if not isinstance(content, payloads.Digest | payloads.Instant):
            return render.text_message(chat.platform, content.text)
        entries = content.pages
        digest = content if isinstance(content, payloads.Digest) else None
        claimed = self._claimed.pop(row.id, None)
        if claimed is None:
            async with reader(self._engine).connect() as conn:
                claimed = _Claimed(
                    await page_store.load_pages(conn, [page_id for page_id, _ in entries])
                )
        day = digest.date if digest is not None and digest.date else row.created_at.date()
        # Everything the (pure) digest and render stages read: equal keys, equal messages.
        ranked = digest is not None and digest.ranked
        more = len(digest.rest) if digest is not None else 0
        welcome = digest is not None and digest.welcome
        key = (chat.platform, chat.lang, chat.filter, entries, day, row.kind, ranked, more, welcome)
        parts = claimed.rendered.get(key)
        if parts is None:
            # Rendered for an earlier claim from the same pages, as they were then?
            loaded = claimed.pages
            versions = tuple(loaded.get(page_id) for page_id, _ in entries)
            parts = self._rendered.get((key, versions))
            if parts is not None:
                self._rendered.move_to_end((key, versions))
                claimed.rendered[key] = parts
        if parts is None:
            built = digest_stage.build_digest(
                lang=chat.lang,
                filter=chat.filter,
                candidates=[(loaded[pid], updated) for pid, updated in entries if pid in loaded],
                today=day,
                instant=row.kind == "page",
                welcome=welcome,
            )
            if built:
                built = digest_stage.as_planned(
                    built,
                    page_ids=[pid for pid, _ in entries],
                    pages=loaded,
                    ranked=ranked,
                    more=more,
                )
            parts = tuple(render.digest_messages(chat.platform, built)) if built else ()
            claimed.rendered[key] = parts
            self._rendered[(key, versions)] = parts
            if len(self._rendered) > RENDERED_KEPT:
                self._rendered.popitem(last=False)
        shown = [claimed.pages[pid] for pid, _ in entries if pid in claimed.pages]
        if parts and chat.platform != Platform.CONSOLE and toggle.offered(shown, chat.lang):
            # Per row, after the (shared) rendering: the toggle names this row.
            back = toggle.button(toggle.other(chat.lang), row.id)
            return toggle.with_toggle(chat.platform, parts, back)
        return list(parts)

    def _pop(self, queue: _ChatQueue) -> None:
        row = queue.rows.popleft()
        self._claimed.pop(row.id, None)
        queue.parts = None
        queue.next_part = 0
        queue.thread = None
        self._release(row)

    def _release(self, row: OutboxRow) -> None:
        self._held -= 1
        if self._held in (0, self._low_water - 1):
            self._claim_wake.set()
        if row.broadcast_id is not None:
            self._held_of[row.broadcast_id] -= 1
            if self._held_of[row.broadcast_id] <= 0:
                del self._held_of[row.broadcast_id]

    async def _finish(self, queue: _ChatQueue) -> None:
        row = queue.rows[0]
        await self._records.sent(row.id)
        self.sent += 1
        self._pop(queue)
        await self._broadcasts_progressed([row.broadcast_id])

    async def _fail_row(self, queue: _ChatQueue, reason: str, *, code: str) -> None:
        row = queue.rows[0]
        platform = queue.record.chat.platform.value
        metrics.MESSAGES_FAILED.labels(platform, code).inc()
        log.warning("delivery failed: %s", reason, extra=_ctx(queue.record))

        async def fail() -> None:
            async with self._engine.begin() as conn:
                await outbox.fail(conn, row_id=row.id, error=reason, attempts=row.attempts + 1)

        await self._durably(fail, doing="recording a failed message")
        self.failed += 1
        self._pop(queue)
        await self._broadcasts_progressed([row.broadcast_id])

    async def _retry(
        self,
        queue: _ChatQueue,
        exc: DeliveryError,
        *,
        count: bool,
        delay: float | None = None,
    ) -> None:
        row = queue.rows[0]
        attempts = row.attempts + (1 if count else 0)
        wait = delay if delay is not None else backoff(attempts, base_seconds=self._backoff_base)
        metrics.MESSAGES_RETRIED.labels(queue.record.chat.platform.value, exc.code).inc()
        log.info("will retry in %.0fs: %s", wait, exc.reason, extra=_ctx(queue.record))

        async def retry_later() -> None:
            async with self._engine.begin() as conn:
                await outbox.part_sent(
                    conn, row_id=row.id, parts_sent=queue.next_part, thread_ref=queue.thread
                )
                await outbox.retry_later(
                    conn,
                    row_id=row.id,
                    not_before=page_store.utcnow() + dt.timedelta(seconds=wait),
                    error=exc.reason,
                    count_attempt=count,
                )

        await self._durably(retry_later, doing="recording a retry")
        self._pop(queue)

    def _pause(self, sender: Sender) -> None:
        """Claim nothing more for the sender's platform until its credentials work again."""
        if sender.platform not in self._paused:
            resume = asyncio.create_task(self._resume_when_authorized(sender))
            self._paused[sender.platform] = resume

    async def _resume_when_authorized(self, sender: Sender) -> None:
        await sender.wait_authorized()
        self._paused.pop(sender.platform, None)
        log.info("sending to %s resumes", sender.platform.value)
        self._claim_wake.set()

    async def _auth_failed(self, platform: Platform, reason: str) -> None:
        """Tell the operator alerts (an ``auth:PLATFORM`` incident)."""
        if self._on_auth_failure is None:
            return
        try:
            await self._on_auth_failure(platform, reason)
        except Exception:  # an alert must not stop deliveries
            log.exception("could not record an authentication failure")

    async def _hold(self, queue: _ChatQueue, *, reason: str) -> None:
        """The chat's messages in memory go back to the queue as they were: no attempt
        counted, the parts already sent kept, the chat untouched."""
        rows = list(queue.rows)

        async def give_back() -> None:
            async with self._engine.begin() as conn:
                await outbox.part_sent(
                    conn, row_id=rows[0].id, parts_sent=queue.next_part, thread_ref=queue.thread
                )
                for row in rows:
                    await outbox.retry_later(
                        conn,
                        row_id=row.id,
                        not_before=page_store.utcnow(),
                        error=reason,
                        count_attempt=False,
                    )

        await self._durably(give_back, doing="giving messages back to the queue")
        for row in rows:
            self._claimed.pop(row.id, None)
            self._release(row)
        queue.rows.clear()
        queue.parts = None
        queue.next_part = 0
        queue.thread = None

    async def _chat_gone(self, queue: _ChatQueue, exc: DeliveryError, *, state: ChatState) -> None:
        platform = queue.record.chat.platform.value
        log.warning(
            "chat unreachable, now %s: %s", state.value, exc.reason, extra=_ctx(queue.record)
        )
        failed: list[tuple[int, set[int]]] = []

        async def stop_chat() -> None:
            async with self._engine.begin() as conn:
                await chat_store.deactivate(
                    conn, pk=queue.record.pk, reason=exc.reason, code=exc.code, state=state
                )
                failed[:] = [
                    await outbox.fail_chat(conn, chat_pk=queue.record.pk, error=exc.reason)
                ]

        await self._durably(stop_chat, doing="recording a chat that is gone")
        count, broadcasts = failed[0]
        metrics.MESSAGES_FAILED.labels(platform, exc.code).inc(max(count, 1))
        self.failed += max(count, 1)
        for row in queue.rows:
            self._claimed.pop(row.id, None)
            self._release(row)
        queue.rows.clear()
        queue.parts = None
        await self._broadcasts_progressed(broadcasts)

    async def _broadcasts_progressed(self, broadcast_ids: Iterable[int | None]) -> None:
        """Rows of these broadcasts were completed (sent or failed for good): a broadcast
        of which this instance holds no more rows may be finished. Whichever instance
        completes the last row looks after it has recorded that row, so one of them sees
        the broadcast finished."""
        if self._on_broadcast_row is None:
            return
        for broadcast_id in broadcast_ids:
            if broadcast_id is not None and broadcast_id not in self._held_of:
                try:
                    await self._on_broadcast_row(broadcast_id)
                except Exception:  # a report must not stop deliveries
                    log.exception("broadcast progress failed")


def _pacing_of(sender: Sender) -> Pacing:
    """The sender's own pacing (shared with its platform's replies), else a new one."""
    pacing = sender.pacing
    return pacing if pacing is not None else Pacing(sender.rate_per_second)


def _slot_key(sender: Sender, chat_id: str) -> str:
    """The key of the chat's slot: the chat, or what the sender says shares its limit
    (the forum group of a Telegram topic)."""
    return sender.slot_key(chat_id)


def new_worker_id() -> str:
    """``host:pid:random``: lets a restarted process on the same host tell at once which
    claims belonged to a process that no longer exists."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_is_dead(owner: str) -> bool:
    """True when ``owner`` names a process of this host that is gone."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _ctx(record: ChatRecord) -> dict[str, object]:
    return {"chat": record.chat.address, "platform": record.chat.platform.value}


def _pages_of(row: OutboxRow) -> tuple[payloads.Entry, ...] | None:
    """The pages of a digest or instant row; None for a text or a malformed row."""
    try:
        content = row.content()
    except payloads.PayloadError:
        return None
    return content.pages if isinstance(content, payloads.Digest | payloads.Instant) else None
