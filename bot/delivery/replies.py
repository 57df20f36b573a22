"""Replies to chat commands, sent through the platform's :class:`~bot.delivery.pacing.Pacing`
with the deliveries: ahead of them, retried as they are, and counted."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from bot import metrics
from bot.delivery.failures import MAX_UNKNOWN_SENDS
from bot.delivery.pacing import Pacing, Sleep, written_at
from bot.errors import DeliveryError, RateLimited, TransientError

log = logging.getLogger("bot.pacing")

# A reply is tried this many times (429s and transient failures) before it is given up.
REPLY_ATTEMPTS = 8
# A reply that failed on the way waits this long before its second try, doubling after.
REPLY_BACKOFF_SECONDS = 0.5
# However long a 429 asks for, a reply waits at most this long at a time (a reply that
# comes later than this is of little use, but it still comes).
REPLY_MAX_WAIT_SECONDS = 60.0

T = TypeVar("T")


class Replies:
    """Sends the replies to commands through a platform's :class:`Pacing`.

    A reply takes the chat's slot ahead of queued deliveries and the platform's pace ahead
    of them (``first``), is retried after a 429 (as long as the platform asks, up to
    ``REPLY_MAX_WAIT_SECONDS`` at a time) and after a failure on the way (backing off), up
    to ``REPLY_ATTEMPTS`` tries, but sent again once at most after a try with no answer (it
    may have arrived: ``MAX_UNKNOWN_SENDS`` copies at most, as a delivery), and is counted
    in ``trendbot_replies_total`` by outcome: ``sent``, ``retried`` (each try that will be
    made again) and ``failed``.
    """

    def __init__(self, pacing: Pacing, *, platform: str, sleep: Sleep = asyncio.sleep) -> None:
        self.pacing = pacing
        self._platform = platform
        self._sleep = sleep

    async def send(
        self,
        send: Callable[[], Awaitable[T]],
        *,
        chat: str,
        interval: float,
        pace_key: str | None = None,
    ) -> T | None:
        """Send one reply with ``send`` (which raises a ``DeliveryError``); return what it
        returned, or None when the reply could not be sent.

        Args:
            send: makes the request; called once per try.
            chat: the key of the chat's slot (see :class:`~bot.delivery.pacing.ChatSlots`).
            interval: the least spacing between two messages to the chat.
            pace_key: the key of the platform's pace, where it has several.
        """
        chats = self.pacing.chats
        pace = self.pacing.pace(pace_key)
        ctx = {"chat": f"{self._platform}:{chat}", "platform": self._platform}
        unknown = 0  # tries with no answer: each may have arrived
        for attempt in range(1, REPLY_ATTEMPTS + 1):
            await chats.take_first(chat)
            at: float | None = None
            try:
                at = await pace.acquire(first=True, hold=True)
                result = await send()
            except DeliveryError as exc:
                error = exc
            else:
                metrics.REPLIES.labels(self._platform, "sent").inc()
                return result
            finally:
                if at is not None:
                    pace.release()
                chats.left(chat, at=None if at is None else written_at(at), interval=interval)
            if isinstance(error, TransientError) and error.ambiguous:
                unknown += 1
            wait = self._retry_wait(error, attempt)
            if wait is None or unknown >= MAX_UNKNOWN_SENDS:
                break
            if isinstance(error, RateLimited):
                chats.hold(chat, seconds=wait)
            metrics.REPLIES.labels(self._platform, "retried").inc()
            log.info("reply will be tried again in %.1fs: %s", wait, error.reason, extra=ctx)
            await self._sleep(wait)
        metrics.REPLIES.labels(self._platform, "failed").inc()
        log.warning("%s: reply not sent: %s", self._platform, error.reason, extra=ctx)
        return None

    @staticmethod
    def _retry_wait(error: DeliveryError, attempt: int) -> float | None:
        """Seconds before the next try of a reply that failed with ``error``; None: no more."""
        if attempt >= REPLY_ATTEMPTS:
            return None
        if isinstance(error, RateLimited):
            return min(max(error.retry_after, 0.0), REPLY_MAX_WAIT_SECONDS)
        if isinstance(error, TransientError):
            base = REPLY_BACKOFF_SECONDS * 2.0 ** (attempt - 1)
            return min(base * random.uniform(0.8, 1.2), REPLY_MAX_WAIT_SECONDS)
        return None
