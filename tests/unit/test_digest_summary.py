"""`trendbot digest --now`: the summary counts what the command planned and what became of
it, and its numbers add up (issue: replies true, item 17)."""

from __future__ import annotations

import re

import pytest

from bot.cli.send import digest_summary
from bot.store.outbox import Standing


@pytest.mark.parametrize(
    ("planned", "retried", "took", "standing", "left", "expected"),
    [
        # A service beside it sends the 300 rows; 20 rows of an earlier fan-out wait to retry.
        (
            300,
            0,
            300,
            Standing(sent=0, failed=0, due=300, later=0),
            320,
            "300 planned, 0 retried, 0 sent, 0 failed, 300 still being sent, "
            "0 left queued for retry (20 other messages queued for later)",
        ),
        (40, 0, 40, Standing(sent=40, failed=0, due=0, later=0), 0,
         "40 planned, 0 retried, 40 sent, 0 failed, 0 left queued for retry"),
        (5, 2, 9, Standing(sent=6, failed=1, due=0, later=2), 2,
         "5 planned, 2 retried, 2 already due, 6 sent, 1 failed, 2 left queued for retry"),
    ],
)  # fmt: skip
def test_the_summary_adds_up(
    planned: int, retried: int, took: int, standing: Standing, left: int, expected: str
) -> None:
    text = digest_summary(planned=planned, retried=retried, took=took, done=standing, left=left)
    assert text == expected
    numbers = dict((name, int(n)) for n, name in re.findall(r"(\d+) ([a-z ]+?)(?:,|$| \()", text))
    outcome = sum(
        numbers.get(k, 0) for k in ("sent", "failed", "still being sent", "left queued for retry")
    )
    assert outcome == planned + retried + numbers.get("already due", 0)
