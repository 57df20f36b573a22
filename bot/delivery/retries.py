"""Retries and failures (:class:`FailurePolicy`): what the delivery engine does when a send
fails, as :func:`bot.delivery.failures.decide` rules (``bot.errors`` is the vocabulary; each
sender translates its library's errors into it):

- ``RateLimited``: that chat waits ``retry_after``; the message is sent then, never dropped.
- ``TransientError`` (5xx, timeout, connection): back to the queue with exponential backoff
  and jitter; after ``MAX_ATTEMPTS`` attempts (about an hour) it is marked failed.
- ``ChatGone``: the chat becomes inactive and nothing more is sent to it.
- ``NotInChannel`` (Slack): the chat is paused until someone invites the bot and resumes.
- ``ChatMigrated``: the chat takes its new id and the message goes there at once.
- ``PermanentError``: this message is marked failed; the chat stays as it is.
- ``PlatformAuthFailed``: nothing more is sent to that platform until its credentials
  work again; its messages go back to the queue as they were.
- ``OutcomeUnknown`` (the request left, no answer came): the message may have arrived. It
  is sent again once, after ``UNKNOWN_PAUSE_SECONDS`` and with the sender's longer timeout;
  when that has no answer either it is ``held`` (not sent again: at most two copies), the
  chat's other messages wait ``CHAT_HOLD_SECONDS``, and the platform counts as slow
  (``/healthz``, the ``slow:PLATFORM`` alert) for ``SLOW_WINDOW_SECONDS``, on every
  platform: an idempotency key (Discord's nonce) holds for a few minutes only.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncEngine

from bot import metrics
from bot.delivery import failures
from bot.delivery.failures import Outcome
from bot.delivery.queues import ChatQueue, Queues, ctx
from bot.delivery.recording import DatabaseHealth, durably
from bot.delivery.sender import Sender
from bot.errors import DeliveryError, RateLimited, TransientError
from bot.models import ChatState, Platform
from bot.store import chats as chat_store
from bot.store import merges as merge_store
from bot.store import outbox
from bot.store import pages as page_store

log = logging.getLogger("bot.delivery")

MAX_ATTEMPTS = 8
# 30 s doubling: retries at about 0.5, 1, 2, 4, 8, 16 and 32 minutes, 8 attempts in ~1 hour.
BACKOFF_BASE_SECONDS = 30.0
BACKOFF_JITTER = 0.2
# A 429 asking for a longer wait sends the message back to the queue instead of memory.
MAX_INLINE_WAIT_SECONDS = 60.0
# A message whose send had no answer is sent again this long after (a platform that was slow
# for a moment has answered, or delivered it, by then).
UNKNOWN_PAUSE_SECONDS = 30.0
# The other messages of a chat whose message was held wait this long before they are sent.
CHAT_HOLD_SECONDS = 300.0
# A platform that left a send with no answer counts as slow for this long after.
SLOW_WINDOW_SECONDS = 300.0


def backoff(attempt: int, *, base_seconds: float = BACKOFF_BASE_SECONDS) -> float:
    """Seconds before attempt ``attempt + 1``: exponential with +-20 % jitter."""
    base = base_seconds * float(2 ** max(0, attempt - 1))
    return base * (1 + random.uniform(-BACKOFF_JITTER, BACKOFF_JITTER))


class FailurePolicy:
    """Carries out the failure policy for the first message of a chat's queue: records in
    the outbox (and the chats) what a failed send calls for, and takes out of ``queues``
    the rows that leave memory. Platforms that refused the credentials are paused here
    (:meth:`paused`) until their senders say they work again; ``on_auth_failure`` is told
    of each refusal. ``failed`` and ``held`` count the rows failed for good and held."""

    def __init__(
        self,
        *,
        engine: AsyncEngine,
        queues: Queues,
        health: DatabaseHealth,
        senders: Mapping[Platform, Sender],
        backoff_base: float = BACKOFF_BASE_SECONDS,
        unknown_pause: float = UNKNOWN_PAUSE_SECONDS,
        on_auth_failure: Callable[[Platform, str], Awaitable[None]] | None = None,
    ) -> None:
        self._engine = engine
        self._queues = queues
        self._health = health
        self._senders = senders
        self._backoff_base = backoff_base
        # A send with no answer: the pause before its one re-send, and when each was seen
        # (the platform is slow while any is recent).
        self._unknown_pause = unknown_pause
        self._unknown_at: dict[Platform, deque[float]] = {}
        self._on_auth_failure = on_auth_failure
        self._paused: dict[Platform, asyncio.Task[None]] = {}  # refused credentials
        self.failed = 0  # outbox rows that failed for good
        self.held = 0  # outbox rows held: sent twice with no answer, not sent again

    def paused(self, platform: Platform) -> bool:
        """Whether sending to ``platform`` waits for its credentials to work again."""
        return platform in self._paused

    def end_pauses(self) -> list[asyncio.Task[None]]:
        """The waits for credentials under way, for the stopping engine to cancel; none is
        paused after."""
        waits = list(self._paused.values())
        self._paused.clear()
        return waits

    async def apply(self, queue: ChatQueue, exc: DeliveryError) -> None:
        """Carry out :func:`bot.delivery.failures.decide` for the failed send of the first
        message."""
        chat = queue.record.chat
        decision = failures.decide(
            exc,
            attempts=queue.rows[0].attempts,
            max_attempts=MAX_ATTEMPTS,
            max_inline_wait=MAX_INLINE_WAIT_SECONDS,
            unknown_sends=queue.rows[0].unknown_sends,
            unknown_pause=self._unknown_pause,
        )
        if isinstance(exc, TransientError) and exc.ambiguous:
            self._no_answer(chat.platform)
        match decision.outcome:
            case Outcome.HOLD:
                self._pause(self._senders[chat.platform])
                await self.give_back(queue, reason=exc.reason)
                await self._auth_failed(chat.platform, exc.reason)
            case Outcome.WAIT:
                metrics.MESSAGES_RETRIED.labels(chat.platform.value, exc.code).inc()
                log.warning("rate limited for %.1fs", decision.delay, extra=ctx(queue.record))
                queue.ready_at = time.monotonic() + (decision.delay or 0.0)
            case Outcome.RETRY:
                if isinstance(exc, RateLimited):
                    log.warning("rate limited for %.1fs", decision.delay, extra=ctx(queue.record))
                await self._retry(
                    queue,
                    exc,
                    count=decision.count_attempt,
                    delay=decision.delay,
                    unknown=decision.unknown,
                )
            case Outcome.MOVE:
                new_chat_id = decision.new_chat_id
                assert new_chat_id is not None

                async def migrate() -> None:
                    async with self._engine.begin() as conn:
                        await merge_store.migrate_id(
                            conn, pk=queue.record.pk, new_chat_id=new_chat_id
                        )

                await durably(migrate, doing="recording a chat's new id", health=self._health)
                log.info("chat migrated to %s", new_chat_id, extra=ctx(queue.record))
                queue.record = replace(queue.record, chat=replace(chat, chat_id=new_chat_id))
                queue.ready_at = time.monotonic()
            case Outcome.STOP_CHAT:
                assert decision.chat_state is not None
                await self._chat_gone(queue, exc, state=decision.chat_state)
            case Outcome.FAIL:
                await self.fail(queue, decision.reason, code=exc.code)
            case Outcome.HELD:
                unknown = isinstance(exc, TransientError) and exc.ambiguous
                await self._hold_row(queue, decision.reason, code=exc.code, unknown=unknown)

    def _no_answer(self, platform: Platform) -> None:
        """A send to ``platform`` had no answer: it counts as slow for a while."""
        now = time.monotonic()
        stamps = self._unknown_at.setdefault(platform, deque())
        stamps.append(now)
        while stamps and stamps[0] < now - SLOW_WINDOW_SECONDS:
            stamps.popleft()

    def slow(self) -> dict[str, str]:
        """The platforms that left sends with no answer in the last ``SLOW_WINDOW_SECONDS``,
        each with what ``/healthz`` says of it."""
        now = time.monotonic()
        found: dict[str, str] = {}
        for platform, stamps in self._unknown_at.items():
            recent = sum(1 for at in stamps if at >= now - SLOW_WINDOW_SECONDS)
            if recent:
                minutes = round(SLOW_WINDOW_SECONDS / 60)
                found[platform.value] = (
                    f"{recent} sends had no answer in time in the last {minutes} minutes"
                )
        return found

    async def _hold_row(self, queue: ChatQueue, reason: str, *, code: str, unknown: bool) -> None:
        """The first message is held (it may have arrived; it is not sent again), and the
        chat's other messages wait ``CHAT_HOLD_SECONDS``."""
        row = queue.rows[0]
        platform = queue.record.chat.platform.value
        metrics.MESSAGES_FAILED.labels(platform, "held").inc()
        log.error("delivery held, operators are told: %s", reason, extra=ctx(queue.record))
        later = list(queue.rows)[1:]

        async def hold() -> None:
            async with self._engine.begin() as conn:
                await outbox.part_sent(
                    conn, row_id=row.id, parts_sent=queue.next_part, thread_ref=queue.thread
                )
                await outbox.hold(
                    conn,
                    row_id=row.id,
                    error=reason,
                    attempts=row.attempts + 1,
                    unknown=unknown,
                    now=page_store.utcnow(),
                )
                for other in later:
                    await outbox.retry_later(
                        conn,
                        row_id=other.id,
                        not_before=page_store.utcnow() + dt.timedelta(seconds=CHAT_HOLD_SECONDS),
                        error="held: an earlier message to this chat had no answer",
                        count_attempt=False,
                    )

        await durably(hold, doing="recording a held message", health=self._health)
        self.held += 1
        # Rows claimed for the chat while this wrote were not put back: they stay in
        # memory, and wait as the others do.
        self._queues.clear(queue, [row, *later])
        queue.ready_at = time.monotonic() + CHAT_HOLD_SECONDS
        await self._queues.broadcasts_progressed([row.broadcast_id])

    async def fail(self, queue: ChatQueue, reason: str, *, code: str) -> None:
        """The first message failed for good; the chat's others go on."""
        row = queue.rows[0]
        platform = queue.record.chat.platform.value
        metrics.MESSAGES_FAILED.labels(platform, code).inc()
        log.warning("delivery failed: %s", reason, extra=ctx(queue.record))

        async def record_failure() -> None:
            async with self._engine.begin() as conn:
                await outbox.fail(conn, row_id=row.id, error=reason, attempts=row.attempts + 1)

        await durably(record_failure, doing="recording a failed message", health=self._health)
        self.failed += 1
        self._queues.pop(queue)
        await self._queues.broadcasts_progressed([row.broadcast_id])

    async def _retry(
        self,
        queue: ChatQueue,
        exc: DeliveryError,
        *,
        count: bool,
        delay: float | None = None,
        unknown: bool = False,
    ) -> None:
        row = queue.rows[0]
        attempts = row.attempts + (1 if count else 0)
        wait = delay if delay is not None else backoff(attempts, base_seconds=self._backoff_base)
        metrics.MESSAGES_RETRIED.labels(queue.record.chat.platform.value, exc.code).inc()
        log.info("will retry in %.0fs: %s", wait, exc.reason, extra=ctx(queue.record))

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
                    unknown=unknown,
                )

        await durably(retry_later, doing="recording a retry", health=self._health)
        self._queues.pop(queue)

    def _pause(self, sender: Sender) -> None:
        """Claim nothing more for the sender's platform until its credentials work again."""
        if sender.platform not in self._paused:
            resume = asyncio.create_task(self._resume_when_authorized(sender))
            self._paused[sender.platform] = resume

    async def _resume_when_authorized(self, sender: Sender) -> None:
        await sender.wait_authorized()
        self._paused.pop(sender.platform, None)
        log.info("sending to %s resumes", sender.platform.value)
        self._queues.claim_wake.set()

    async def _auth_failed(self, platform: Platform, reason: str) -> None:
        """Tell the operator alerts (an ``auth:PLATFORM`` incident)."""
        if self._on_auth_failure is None:
            return
        try:
            await self._on_auth_failure(platform, reason)
        except Exception:  # an alert must not stop deliveries
            log.exception("could not record an authentication failure")

    async def give_back(self, queue: ChatQueue, *, reason: str) -> None:
        """The chat's messages in memory go back to the queue as they were: no attempt
        counted, the parts already sent kept, the chat untouched."""
        rows = list(queue.rows)

        async def requeue() -> None:
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

        await durably(requeue, doing="giving messages back to the queue", health=self._health)
        self._queues.clear(queue, rows)

    async def _chat_gone(self, queue: ChatQueue, exc: DeliveryError, *, state: ChatState) -> None:
        platform = queue.record.chat.platform.value
        log.warning(
            "chat unreachable, now %s: %s", state.value, exc.reason, extra=ctx(queue.record)
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

        await durably(stop_chat, doing="recording a chat that is gone", health=self._health)
        count, broadcasts = failed[0]
        metrics.MESSAGES_FAILED.labels(platform, exc.code).inc(max(count, 1))
        self.failed += max(count, 1)
        self._queues.clear(queue)
        await self._queues.broadcasts_progressed(broadcasts)
