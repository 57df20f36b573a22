"""The delivery failure policy (bot/delivery/failures.py) as a table: error x attempts ->
decision."""

from __future__ import annotations

import itertools

import pytest

from bot.delivery.failures import MAX_UNKNOWN_SENDS, Decision, Outcome, decide
from bot.errors import (
    ChatGone,
    ChatMigrated,
    DeliveryError,
    NotInChannel,
    OutcomeUnknown,
    PermanentError,
    PlatformAuthFailed,
    RateLimited,
    TransientError,
)
from bot.models import ChatState

MAX_ATTEMPTS = 8
MAX_INLINE_WAIT = 60.0

TABLE: list[tuple[str, DeliveryError, int, Decision]] = [
    (
        "credentials refused: held, whatever the attempts",
        PlatformAuthFailed("unauthorized", code="invalid_auth"),
        7,
        Decision(Outcome.HOLD, "unauthorized"),
    ),
    (
        "a short rate limit is waited out in memory",
        RateLimited("rate_limited", retry_after=3),
        0,
        Decision(Outcome.WAIT, "rate_limited", delay=3),
    ),
    (
        "a rate limit of exactly the inline bound is still waited out",
        RateLimited("rate_limited", retry_after=MAX_INLINE_WAIT),
        0,
        Decision(Outcome.WAIT, "rate_limited", delay=MAX_INLINE_WAIT),
    ),
    (
        "a long rate limit requeues without counting an attempt",
        RateLimited("rate_limited", retry_after=600),
        7,
        Decision(Outcome.RETRY, "rate_limited", delay=600, count_attempt=False),
    ),
    (
        "a migrated chat is sent to at its new id",
        ChatMigrated("migrated", new_chat_id="-1002"),
        0,
        Decision(Outcome.MOVE, "migrated", new_chat_id="-1002"),
    ),
    (
        "a chat gone becomes inactive",
        ChatGone("blocked: bot was blocked by the user", code="blocked"),
        0,
        Decision(
            Outcome.STOP_CHAT,
            "blocked: bot was blocked by the user",
            chat_state=ChatState.INACTIVE,
        ),
    ),
    (
        "not in the channel: the chat is paused",
        NotInChannel("not_in_channel"),
        0,
        Decision(Outcome.STOP_CHAT, "not_in_channel", chat_state=ChatState.PAUSED),
    ),
    (
        "a permanent error fails the message at the first attempt",
        PermanentError("bad_request: message is too long", code="bad_request"),
        0,
        Decision(Outcome.FAIL, "bad_request: message is too long"),
    ),
    (
        "a transient error is retried with backoff",
        TransientError("timeout", code="timeout"),
        0,
        Decision(Outcome.RETRY, "timeout"),
    ),
    (
        "the last attempt but one is still retried",
        TransientError("network"),
        MAX_ATTEMPTS - 2,
        Decision(Outcome.RETRY, "network"),
    ),
    (
        "the last attempt gives up",
        TransientError("network"),
        MAX_ATTEMPTS - 1,
        Decision(Outcome.FAIL, f"gave up after {MAX_ATTEMPTS} attempts: network"),
    ),
    (
        "an error of no known kind is transient",
        DeliveryError("something odd"),
        0,
        Decision(Outcome.RETRY, "something odd"),
    ),
]


@pytest.mark.parametrize(
    ("exc", "attempts", "expected"),
    [row[1:] for row in TABLE],
    ids=[row[0] for row in TABLE],
)
def test_decide(exc: DeliveryError, attempts: int, expected: Decision) -> None:
    assert (
        decide(exc, attempts=attempts, max_attempts=MAX_ATTEMPTS, max_inline_wait=MAX_INLINE_WAIT)
        == expected
    )


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (ChatGone("x"), "chat_gone"),
        (ChatGone("x", code="blocked"), "blocked"),
        (NotInChannel("x"), "not_in_channel"),
        (RateLimited("x", retry_after=1), "rate_limited"),
        (TransientError("x"), "transient"),
        (OutcomeUnknown("x"), "outcome_unknown"),
        (PermanentError("x"), "permanent"),
        (ChatMigrated("x", new_chat_id="1"), "chat_migrated"),
        (PlatformAuthFailed("x", code="invalid_auth"), "invalid_auth"),
        (DeliveryError("x"), "error"),
    ],
)
def test_every_delivery_error_has_a_code(exc: DeliveryError, code: str) -> None:
    assert exc.code == code


PAUSE = 30.0
TIMEOUT = OutcomeUnknown("timeout: Timed out", code="timeout")

# error, attempts, unknown sends before, a re-send never a duplicate -> decision
UNKNOWN_TABLE: list[tuple[str, DeliveryError, int, int, Decision]] = [
    (
        "a first send with no answer is sent again once, after the pause",
        TIMEOUT,
        0,
        0,
        Decision(Outcome.RETRY, TIMEOUT.reason, delay=PAUSE, unknown=True),
    ),
    (
        "the re-send with no answer either is held: two copies at most",
        TIMEOUT,
        1,
        1,
        Decision(
            Outcome.HELD,
            f"held: sent 2 times with no answer, it may have arrived; not sent again: "
            f"{TIMEOUT.reason}",
        ),
    ),
    (
        "a flagged TransientError counts as unknown too",
        TransientError("fatal_error", ambiguous=True),
        1,
        1,
        Decision(
            Outcome.HELD,
            "held: sent 2 times with no answer, it may have arrived; not sent again: fatal_error",
        ),
    ),
    (
        "an unsent failure after an unknown send is retried with backoff",
        TransientError("network: refused"),
        1,
        1,
        Decision(Outcome.RETRY, "network: refused"),
    ),
    (
        "the last attempt after an unknown send is held, not failed: it may have arrived",
        TransientError("http_503"),
        MAX_ATTEMPTS - 1,
        1,
        Decision(
            Outcome.HELD,
            f"held: gave up after {MAX_ATTEMPTS} attempts, an earlier one with no answer "
            "may have arrived: http_503",
        ),
    ),
]


@pytest.mark.parametrize(
    ("exc", "attempts", "unknown", "expected"),
    [row[1:] for row in UNKNOWN_TABLE],
    ids=[row[0] for row in UNKNOWN_TABLE],
)
def test_decide_unknown_outcomes(
    exc: DeliveryError, attempts: int, unknown: int, expected: Decision
) -> None:
    got = decide(
        exc,
        attempts=attempts,
        max_attempts=MAX_ATTEMPTS,
        max_inline_wait=MAX_INLINE_WAIT,
        unknown_sends=unknown,
        unknown_pause=PAUSE,
    )
    assert got == expected


def test_no_message_gets_more_than_two_copies_whatever_the_failures() -> None:
    """Any sequence of failures: the sends that may have arrived stay within two."""
    errors: list[DeliveryError] = [
        TIMEOUT,
        TransientError("http_503"),
        RateLimited("x", retry_after=1),
    ]
    for sequence in itertools.product(errors, repeat=5):
        attempts = unknown = 0
        for error in sequence:
            decision = decide(
                error,
                attempts=attempts,
                max_attempts=MAX_ATTEMPTS,
                max_inline_wait=MAX_INLINE_WAIT,
                unknown_sends=unknown,
                unknown_pause=PAUSE,
            )
            if isinstance(error, OutcomeUnknown):
                unknown += 1
            if decision.outcome in (Outcome.HELD, Outcome.FAIL):
                break
            attempts += decision.count_attempt and not isinstance(error, RateLimited)
        # Each unknown send may be a copy; one more send is made only while under the bound.
        assert unknown <= MAX_UNKNOWN_SENDS, sequence
