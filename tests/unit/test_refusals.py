"""A public endpoint's refusals are logged at most once a minute, with their count
(bot.logs.Refusals), on a fake clock."""

from __future__ import annotations

import logging

import pytest

from bot.logs import REFUSALS_LOG_SECONDS, Refusals


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("times", "lines"),
    [
        # One refusal: one line at once.
        ([0.0], ["x refused: why (1 since the last such line)"]),
        # A thousand in a second: still the one line.
        ([i / 1000 for i in range(1000)], ["x refused: why (1 since the last such line)"]),
        # Refusals for three minutes, one a second: a line a minute, each counting those
        # since the line before.
        (
            [float(i) for i in range(181)],
            ["x refused: why (1 since the last such line)"]
            + ["x refused: why (60 since the last such line)"] * 3,
        ),
        # A quiet spell: the refusals of the last minute are told with the next line.
        (
            [0.0, 10.0, 20.0, 500.0],
            [
                "x refused: why (1 since the last such line)",
                "x refused: why (3 since the last such line)",
            ],
        ),
    ],
)
def test_refusals_are_logged_at_most_once_a_minute_with_their_count(
    times: list[float], lines: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    start = clock.now
    refusals = Refusals(logging.getLogger("test.refusals"), "x refused", clock=clock)
    with caplog.at_level(logging.WARNING, logger="test.refusals"):
        for at in times:
            clock.now = start + at
            refusals.refused("why")
    assert [r.getMessage() for r in caplog.records] == lines
    assert all(r.levelno == logging.WARNING for r in caplog.records)
    assert refusals.total == len(times)
    assert REFUSALS_LOG_SECONDS == 60.0
