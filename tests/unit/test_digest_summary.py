"""`trendbot digest --now`: the summary counts what the command planned and what became of
it, and its numbers add up (issue: replies true, item 17); it says which messages this
process sent, which a running `trendbot run` sent, and which it handed over to the run
rather than left for a retry."""

from __future__ import annotations

import re

import pytest

from bot.cli.send import digest_summary
from bot.store.standing import Standing


@pytest.mark.parametrize(
    ("planned", "retried", "took", "standing", "left", "here", "run", "expected"),
    [
        # A service beside it still sends the 300 rows when the command stops waiting (90 s
        # without progress); 20 rows of an earlier fan-out wait to retry.
        (
            300, 0, 300, Standing(sent=0, failed=0, due=300, later=0), 320, 0, True,
            "300 planned, 0 retried, 0 sent, 0 failed, 300 handed over to the running "
            "trendbot run, 0 left queued for retry (20 other messages queued for later)",
        ),
        # Sent here, all of it.
        (40, 0, 40, Standing(sent=40, failed=0, due=0, later=0), 0, 40, False,
         "40 planned, 0 retried, 40 sent, 0 failed, 0 left queued for retry"),
        (5, 2, 9, Standing(sent=6, failed=1, due=0, later=2), 2, 6, False,
         "5 planned, 2 retried, 2 already due, 6 sent, 1 failed, 2 left queued for retry"),
        # Handed over to a run, of which a replica was killed: the survivor sent the rest
        # (the run said "177 sent, ... 423 left queued for retry").
        (600, 0, 600, Standing(sent=600, failed=0, due=0, later=0), 0, 0, False,
         "600 planned, 0 retried, 600 sent (600 by the trendbot run), 0 failed, "
         "0 left queued for retry"),
        # Sent here until a run started, which sent the rest.
        (600, 0, 600, Standing(sent=600, failed=0, due=0, later=0), 0, 150, False,
         "600 planned, 0 retried, 600 sent (450 by the trendbot run), 0 failed, "
         "0 left queued for retry"),
        # Rows another process still claims, no run to hand them to.
        (10, 0, 10, Standing(sent=7, failed=0, due=3, later=0), 3, 7, False,
         "10 planned, 0 retried, 7 sent, 0 failed, 3 still to send, 0 left queued for retry"),
        # Two sent twice with no answer: held, counted apart (neither sent nor failed).
        (10, 0, 10, Standing(sent=8, failed=0, due=0, later=0, held=2), 0, 8, False,
         "10 planned, 0 retried, 8 sent, 0 failed, 2 held (no answer twice: may have "
         "arrived, not sent again), 0 left queued for retry"),
    ],
)  # fmt: skip
def test_the_summary_adds_up(
    planned: int,
    retried: int,
    took: int,
    standing: Standing,
    left: int,
    here: int,
    run: bool,
    expected: str,
) -> None:
    text = digest_summary(
        planned=planned,
        retried=retried,
        took=took,
        done=standing,
        left=left,
        sent_here=here,
        run_sending=run,
    )
    assert text == expected
    plain = re.sub(r" \(\d+ by the trendbot run\)", "", text)
    numbers = dict((name, int(n)) for n, name in re.findall(r"(\d+) ([a-z ]+?)(?:,|$| \()", plain))
    outcome = sum(
        numbers.get(k, 0)
        for k in (
            "sent",
            "failed",
            "held",
            "still to send",
            "handed over to the running trendbot run",
            "left queued for retry",
        )
    )
    assert outcome == planned + retried + numbers.get("already due", 0)
