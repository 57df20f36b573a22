"""Delivery: the outbox worker, with the platforms' rate limits and failure rules.

:class:`Delivery` runs the workers and composes the parts they share, each handed what it
needs: the rows in memory (``bot.delivery.queues.Queues``: each chat's queue, and a heap of
chats by the time its per-chat limit allows the next message), which the claimer fills
from the outbox in batches (``bot.delivery.claims.Claimer``); the records of sends
(``bot.delivery.recording.Records``, several to a transaction); and the failure policy
(``bot.delivery.retries.FailurePolicy``). Worker tasks take whichever chat is ready first,
wait for the platform's overall pace, send one platform message, and record it before
taking the next. So a chat never gets two messages faster than its limit, the platform
never gets more than its cap, and one slow or rate-limited chat holds up no one.

Failure rules (``bot.errors`` is the vocabulary; each sender translates its library's
errors into it; ``bot.delivery.retries.FailurePolicy`` carries them out):

- ``RateLimited``: that chat waits ``retry_after``; the message is sent then, never dropped.
- ``TransientError`` (5xx, timeout, connection): back to the queue with exponential backoff
  and jitter; after ``MAX_ATTEMPTS`` attempts (about an hour) it is marked failed.
- ``OutcomeUnknown`` (no answer, the request gone): sent again once, later and waiting
  longer; held when that has no answer either (at most two copies of a message).
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
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence

from prometheus_client import Counter as SentCounter
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import dberrors, metrics, payloads
from bot.delivery.claims import READING, Claimer
from bot.delivery.pacing import PER_CHAT_MARGIN_SECONDS, Abandoned, Pace, Pacing, written_at
from bot.delivery.queues import ChatQueue, Queues, ctx
from bot.delivery.recording import (
    DB_RETRY_MAX_SECONDS,
    RECORD_BATCH,
    RECORD_WINDOW_SECONDS,
    DatabaseHealth,
    Records,
)
from bot.delivery.rendering import Renderer
from bot.delivery.retries import BACKOFF_BASE_SECONDS, UNKNOWN_PAUSE_SECONDS, FailurePolicy
from bot.delivery.sender import Attempt, Sender
from bot.errors import DeliveryError, TransientError
from bot.models import ChatSettings, Outgoing, Platform

log = logging.getLogger("bot.delivery")

# Bounded shutdown: in-flight sends get this long to finish; the rest stays queued.
SHUTDOWN_GRACE_SECONDS = 10.0
# The in-flight window: how many sends may be under way at once. It starts at the
# ``concurrency`` given (the floor) and follows cap x the measured time a send holds a worker
# (the request and its record), with this much to spare, up to the ceiling. At 100 ms a cap
# of 1,000/s needs about 150; 64 fixed workers held one process to 640/s at best.
WINDOW_HEADROOM = 1.5
MAX_IN_FLIGHT = 1024
# The measured time per send is a moving average: each new send weighs this much.
LATENCY_WEIGHT = 0.05
# Messages under way and none settled (sent and recorded, failed, or put back) for this
# long: deliveries are stalled, whatever the reason (a disk that takes no record, a
# database or a platform that does not answer), and ``problem`` says so.
STALL_SECONDS = 3.0
# A claim takes milliseconds; one the database has held this long waits on a lock.
CLAIM_STALL_SECONDS = 10.0


class Delivery:
    """The outbox worker of one process: sends each chat's messages at its pace from the
    rows in memory (:class:`~bot.delivery.queues.Queues`), which its claimer fills
    (:class:`~bot.delivery.claims.Claimer`); records them (:class:`Records`); and carries
    out the failure rules (:class:`~bot.delivery.retries.FailurePolicy`)."""

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
        unknown_pause: float = UNKNOWN_PAUSE_SECONDS,
    ) -> None:
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
        self._in_flight = 0  # workers between taking a message and recording it
        self._progress_at = 0.0  # time.monotonic() a message last settled (or work began)
        self._health = DatabaseHealth()
        self._records = Records(
            engine,
            window=RECORD_WINDOW_SECONDS,
            batch=RECORD_BATCH,
            in_flight=lambda: self._in_flight,
            health=self._health,
        )
        self._queues = Queues(
            renderer=Renderer(engine),
            claim_batch=claim_batch,
            window=lambda: self.window,
            on_broadcast_row=on_broadcast_row,
        )
        self._failures = FailurePolicy(
            engine=engine,
            queues=self._queues,
            health=self._health,
            senders=self._senders,
            backoff_base=backoff_base,
            unknown_pause=unknown_pause,
            on_auth_failure=on_auth_failure,
        )
        self._claimer = Claimer(
            engine=engine,
            queues=self._queues,
            health=self._health,
            claim_batch=claim_batch,
            platforms=self._sendable,
            worker_id=worker_id,
        )
        self._only_broadcast: int | None = None
        self._counters: dict[tuple[Platform, str], SentCounter] = {}
        self.sent = 0  # outbox rows completed by this instance

    # Public -----------------------------------------------------------------------------

    @property
    def worker_id(self) -> str:
        """Whose claims this instance's are (``host:pid:random``), and its leases."""
        return self._claimer.worker_id

    @property
    def failed(self) -> int:
        """Outbox rows that failed for good."""
        return self._failures.failed

    @property
    def held(self) -> int:
        """Outbox rows held: sent twice with no answer, not sent again."""
        return self._failures.held

    @property
    def window(self) -> int:
        """Sends that may be under way at once now (the number of workers)."""
        return len(self._workers)

    def slow(self) -> dict[str, str]:
        """:meth:`bot.delivery.retries.FailurePolicy.slow`: the platforms slow to answer."""
        return self._failures.slow()

    @property
    def problem(self) -> str | None:
        """Why deliveries cannot make progress now, or None: the database's error, a claim
        the database has held without an answer for ``CLAIM_STALL_SECONDS`` (a table
        locked), or messages under way of which none has settled for ``STALL_SECONDS``."""
        problem = self._health.problem
        if problem is not None or self._queues.stopping:
            return problem
        asking = self._claimer.asking_since
        if asking is not None and time.monotonic() - asking > CLAIM_STALL_SECONDS:
            waited = time.monotonic() - asking
            return f"deliveries stalled: the database has not answered a claim for {waited:.0f} s"
        if not self._in_flight:
            return None
        stalled = time.monotonic() - self._progress_at
        if stalled <= STALL_SECONDS:
            return None
        return (
            f"deliveries stalled: {self._in_flight} messages under way, none settled "
            f"for {stalled:.0f} s"
        )

    def notify(self) -> None:
        """New rows may be due (the planner just wrote some)."""
        self._queues.claim_wake.set()

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
        await self._claimer.requeue_stale()
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
        # As a service does at its start: the claims of a process of this host that is
        # gone (a run killed while the command waited on it) come back to the queue.
        await self._claimer.requeue_stale()
        await self._serve(stop=stop or asyncio.Event(), only_chats=chat_pks, drain=True)

    # Engine -----------------------------------------------------------------------------

    async def _serve(
        self, *, stop: asyncio.Event, only_chats: Sequence[int] | None, drain: bool
    ) -> None:
        self._queues.start()
        self._workers.clear()
        self._grow(self._concurrency)
        claimer = asyncio.create_task(
            self._claimer.run(
                only_chats=only_chats, only_broadcast=self._only_broadcast, drain=drain
            )
        )
        stopper = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait({claimer, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._queues.stop()
            done, pending = await asyncio.wait(self._workers, timeout=SHUTDOWN_GRACE_SECONDS)
            paused = self._failures.end_pauses()
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
            await self._claimer.release()
            self._queues.reset()
        if isinstance(failure, Exception):  # the claimer gave up (a bug, or a one-shot's outage)
            raise failure

    def _grow(self, size: int) -> None:
        size = min(size, self._max_in_flight)
        if len(self._workers) >= size or self._queues.stopping:
            return
        while len(self._workers) < size:
            task = asyncio.create_task(self._worker())
            task.add_done_callback(self._worker_ended)
            self._workers.add(task)
        self._queues.mark_low_water()

    def _worker_ended(self, task: asyncio.Task[None]) -> None:
        """A worker that failed is replaced at once: the window never shrinks behind a
        healthy ``/healthz``."""
        if self._queues.stopping or task.cancelled() or task.exception() is None:
            return
        log.error("delivery worker failed; starting another", exc_info=task.exception())
        self._workers.discard(task)
        self._grow(len(self._workers) + 1)

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

    async def _worker(self) -> None:
        while True:
            queue = await self._queues.take()
            if queue is None:
                return
            if not self._in_flight:  # work begins: a stall counts from here
                self._progress_at = time.monotonic()
            self._in_flight += 1
            try:
                await self._send_next(queue)
                self._progress_at = time.monotonic()
            except Exception as exc:
                if not dberrors.is_outage(exc):
                    raise
                # A read before the send (the pages to render) found the database away:
                # the message was not sent, and waits in memory, no attempt counted.
                self._health.failed(exc, doing=READING)
                queue.ready_at = time.monotonic() + DB_RETRY_MAX_SECONDS
            finally:
                self._in_flight -= 1
                if queue.started:
                    self._measured(queue.record.chat.platform, time.monotonic() - queue.started)
                    queue.started = 0.0
                self._queues.put_back(queue)

    async def _send_next(self, queue: ChatQueue) -> None:
        """:meth:`_send_one`, and a bug in it fails that message alone; the database
        being away is the caller's to wait out."""
        try:
            await self._send_one(queue)
        except Exception as exc:  # a bug must not stop deliveries to everyone else
            if dberrors.is_outage(exc):
                raise
            log.exception("unexpected error while delivering", extra=ctx(queue.record))
            if queue.rows:
                await self._failures.apply(queue, TransientError("internal error", code="internal"))

    async def _send_one(self, queue: ChatQueue) -> None:
        row = queue.rows[0]
        chat = queue.record.chat
        sender = self._senders[chat.platform]
        if queue.parts is None:
            try:
                queue.parts = await self._queues.renderer.render(queue.record, row)
            except payloads.PayloadError as exc:  # a row no version of the format reads
                await self._failures.fail(queue, f"malformed payload: {exc}", code="payload")
                return
            queue.next_part = row.parts_sent
            queue.thread = row.thread_ref
        if queue.next_part >= len(queue.parts):
            await self._finish(queue)
            return
        part = queue.parts[queue.next_part]
        if self._failures.paused(chat.platform):
            await self._failures.give_back(queue, reason="credentials refused")
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
            await self._failures.apply(queue, exc)
            return
        if went is None:  # not begun (stopping, or a reply first): it stays queued
            return
        started, ref = went
        try:
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
        finally:
            # Recorded (or given up): settled. Until then the send counted against the cap,
            # so at most the cap's second of sends is ever sent and not yet recorded (what
            # a crash can send twice), however slow or away the database is.
            self._pace_of(sender, chat).settle()

    async def _paced_send(
        self, sender: Sender, queue: ChatQueue, part: Outgoing, *, slot: str, interval: float
    ) -> tuple[float, str | None] | None:
        """Wait for the platform's turn and send ``part``, the chat's slot taken; return
        when it left and the platform's reference, or None if it did not begin (the engine
        stopped, or a reply came for the chat first: it stays queued)."""
        chat = queue.record.chat
        pace = self._pace_of(sender, chat)
        started: float | None = None
        begun = sent = False
        try:
            # Held until the answer: a request written late still counts where it lands.
            # Unsettled until its record (the caller settles it once the send was made).
            # A reply that comes for the chat meanwhile takes the slot: this one waits.
            try:
                started = await pace.acquire(
                    hold=True, settle=True, unless=self._pacing[chat.platform].chats.wanted(slot)
                )
            except Abandoned:
                return None
            if self._queues.stopping:
                return None
            if (
                pace.rate
                and chat.platform not in self._send_seconds
                and not pace.waiting
                and self._queues.ready_by(started)
            ):
                # A cap to keep, messages ready, no send measured yet to size the window,
                # and no worker left for the next turn: every other one is on its way. So
                # the window does not decide the rate of the first round trip (two more,
                # so that one soon waits).
                self._grow(len(self._workers) + 2)
            queue.started = started
            begun = True
            row = queue.rows[0]
            ref = await sender.send(
                chat.chat_id,
                part,
                thread=queue.thread if part.in_thread else None,
                attempt=Attempt(key=f"{row.id}.{queue.next_part}", resend=row.unknown_sends > 0),
            )
            sent = True
            return written_at(started), ref  # the chat's next message keeps its distance
        finally:
            if started is not None:
                pace.release()
                if not sent:
                    pace.settle()
            at = written_at(started) if begun and started is not None else None
            self._pacing[chat.platform].chats.left(slot, at=at, interval=interval)

    def _sendable(self) -> list[Platform]:
        """The platforms whose messages may be claimed now: not those whose credentials
        were refused (until they work again)."""
        return [p for p in self._senders if not self._failures.paused(p)]

    def _pace_of(self, sender: Sender, chat: ChatSettings) -> Pace:
        """The platform's pace, or that of the chat's workspace when the sender has one."""
        return self._pacing[chat.platform].pace(sender.pace_key(chat.chat_id))

    async def _finish(self, queue: ChatQueue) -> None:
        row = queue.rows[0]
        await self._records.sent(row.id)
        self.sent += 1
        self._queues.pop(queue)
        await self._queues.broadcasts_progressed([row.broadcast_id])


def _pacing_of(sender: Sender) -> Pacing:
    """The sender's own pacing (shared with its platform's replies), else a new one."""
    pacing = sender.pacing
    return pacing if pacing is not None else Pacing(sender.rate_per_second)


def _slot_key(sender: Sender, chat_id: str) -> str:
    """The key of the chat's slot: the chat, or what the sender says shares its limit
    (the forum group of a Telegram topic)."""
    return sender.slot_key(chat_id)
