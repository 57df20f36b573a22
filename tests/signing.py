"""Signing times for fuzzed webhook requests.

Slack and Discord sign the timestamp with the body, and the bot refuses a signature it has
seen (a replay, 401) as well as one older than 300 s. A fuzz test that sends the same body
twice (Hypothesis draws ``{}`` often) must sign it at another second each time, however
slowly the examples run, or it is testing the replay refusal by accident.
"""

from __future__ import annotations

import time

# Within the platforms' 300 s window, with room for a slow run.
OLDEST_SECONDS = 250


class SigningTimes:
    """Hands out, for each body, a recent timestamp it was never signed with."""

    def __init__(self) -> None:
        self._used: set[tuple[bytes, int]] = set()

    def fresh(self, body: bytes) -> int:
        now = int(time.time())
        for back in range(OLDEST_SECONDS):
            if (body, now - back) not in self._used:
                self._used.add((body, now - back))
                return now - back
        raise AssertionError(f"one body signed {OLDEST_SECONDS} times in {OLDEST_SECONDS} s")
