"""The delivery failure policy: a failed send -> what happens to the message and the chat.

Pure: :func:`decide` takes the error the adapter raised and the message's attempts so far,
and returns a :class:`Decision` that the delivery engine carries out
(``bot/delivery/retries.py``). The whole policy is this one function, tested as a table in
``tests/unit/test_failures.py``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from bot.errors import (
    ChatGone,
    ChatMigrated,
    DeliveryError,
    NotInChannel,
    PermanentError,
    PlatformAuthFailed,
    RateLimited,
    TransientError,
)
from bot.models import ChatState


class Outcome(enum.StrEnum):
    HOLD = "hold"  # credentials refused: the chat's messages wait, sending to it pauses
    WAIT = "wait"  # the same message again after ``delay``, kept in memory
    RETRY = "retry"  # back to the queue until ``delay`` (None: the backoff) has passed
    MOVE = "move"  # the chat moved to ``new_chat_id``: at once, there
    STOP_CHAT = "stop_chat"  # the chat becomes ``chat_state``; all its messages fail
    FAIL = "fail"  # this message failed for good; the chat goes on
    # Sent with no answer, and sent again with no answer either: the message is held (it may
    # have arrived, it is not sent again), the chat's other messages wait, operators are told
    HELD = "held"


# An unknown outcome (the request left, no answer came) may be a message that arrived: it is
# re-sent once at most, so a chat gets at most this many copies of a message.
MAX_UNKNOWN_SENDS = 2


@dataclass(frozen=True, slots=True)
class Decision:
    outcome: Outcome
    reason: str  # what the outbox row and the log say
    delay: float | None = None  # seconds, for WAIT and RETRY (None: the backoff)
    count_attempt: bool = True  # RETRY: whether this failure counts towards the limit
    chat_state: ChatState | None = None  # STOP_CHAT: INACTIVE or PAUSED
    new_chat_id: str | None = None  # MOVE
    unknown: bool = False  # RETRY: this send's outcome is unknown (it may have arrived)


def decide(
    exc: DeliveryError,
    *,
    attempts: int,
    max_attempts: int,
    max_inline_wait: float,
    unknown_sends: int = 0,
    unknown_pause: float = 0.0,
) -> Decision:
    """What to do after ``exc`` on a message tried ``attempts`` times before this one, of
    which ``unknown_sends`` had no answer.

    * The credentials were refused: nothing is this chat's fault; hold its messages.
    * Rate limited: wait in memory up to ``max_inline_wait`` seconds, else requeue until
      then; neither counts as an attempt.
    * The chat moved (a Telegram supergroup): send there at once.
    * The chat is gone (blocked, kicked, archived): inactive; the bot is not in the
      channel (Slack): paused, with a hint. Either way its queued messages fail.
    * A permanent error (a malformed message): this message fails.
    * The outcome is unknown (the request left, no answer came: it may have arrived):
      once, the message is sent again after ``unknown_pause`` (the sender waits longer for
      that answer); when that send's outcome is unknown too (``MAX_UNKNOWN_SENDS``), it is
      held: not sent again, not failed. So for every platform: a platform's idempotency
      key (Discord's nonce) drops a re-send only within its few minutes, and the one
      re-send comes within them; a later one could be a copy.
    * Anything else is transient: retry with backoff, and fail once the attempts, this
      one counted, reach ``max_attempts`` (held instead, when an earlier send of it may
      have arrived).
    """
    if isinstance(exc, PlatformAuthFailed):
        return Decision(Outcome.HOLD, exc.reason)
    if isinstance(exc, RateLimited):
        if exc.retry_after > max_inline_wait:
            return Decision(Outcome.RETRY, exc.reason, delay=exc.retry_after, count_attempt=False)
        return Decision(Outcome.WAIT, exc.reason, delay=exc.retry_after)
    if isinstance(exc, ChatMigrated):
        return Decision(Outcome.MOVE, exc.reason, new_chat_id=exc.new_chat_id)
    if isinstance(exc, ChatGone):
        return Decision(Outcome.STOP_CHAT, exc.reason, chat_state=ChatState.INACTIVE)
    if isinstance(exc, NotInChannel):
        return Decision(Outcome.STOP_CHAT, exc.reason, chat_state=ChatState.PAUSED)
    if isinstance(exc, PermanentError):
        return Decision(Outcome.FAIL, exc.reason)
    unknown = isinstance(exc, TransientError) and exc.ambiguous
    if unknown and unknown_sends + 1 >= MAX_UNKNOWN_SENDS:
        return Decision(
            Outcome.HELD,
            f"held: sent {unknown_sends + 1} times with no answer, it may have arrived; "
            f"not sent again: {exc.reason}",
        )
    if attempts + 1 >= max_attempts:
        if unknown or unknown_sends:
            return Decision(
                Outcome.HELD,
                f"held: gave up after {attempts + 1} attempts, an earlier one with no answer "
                f"may have arrived: {exc.reason}",
            )
        return Decision(Outcome.FAIL, f"gave up after {attempts + 1} attempts: {exc.reason}")
    if unknown:
        return Decision(Outcome.RETRY, exc.reason, delay=unknown_pause, unknown=True)
    return Decision(Outcome.RETRY, exc.reason)
