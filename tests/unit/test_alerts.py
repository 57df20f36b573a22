"""Incidents: each starts once when its signal fires and ends once when it is clear."""

from __future__ import annotations

import datetime as dt

import pytest

from bot.rules import alerts
from bot.rules.alerts import AuthState, Observation, SendCounts

T0 = dt.datetime(2026, 9, 1, 12, 0)


def run(observations: list[Observation], *, failures: int = 3) -> list[tuple[str, bool]]:
    """Check after check, as the service does: what started (True) and ended (False)."""
    open_keys: set[str] = set()
    changes: list[tuple[str, bool]] = []
    for obs in observations:
        for change in alerts.transitions(obs, open_keys=open_keys, source_failures=failures):
            changes.append((change.key, change.started))
            if change.started:
                open_keys.add(change.key)
            else:
                open_keys.discard(change.key)
    return changes


def streak(n: int, error: str = "missing directory") -> Observation:
    return Observation(source_streaks={"wiki": (n, error if n else None)})


def test_a_source_starts_at_the_third_failure_in_a_row_and_ends_at_the_first_success() -> None:
    sequence = [streak(1), streak(2), streak(3), streak(4), streak(5), streak(0), streak(0)]
    assert run(sequence) == [("source:wiki", True), ("source:wiki", False)]


def test_a_source_that_fails_twice_then_recovers_raises_nothing() -> None:
    assert run([streak(1), streak(2), streak(0), streak(1), streak(2), streak(0)]) == []


def test_alert_source_failures_is_the_threshold() -> None:
    assert run([streak(1)], failures=1) == [("source:wiki", True)]
    assert run([streak(1), streak(2), streak(3)], failures=4) == []


def test_the_start_message_names_the_source_and_its_error() -> None:
    (change,) = alerts.transitions(streak(3), open_keys=set(), source_failures=3)
    assert change.message == "dest.alert.start.source"
    assert change.params == {"name": "wiki", "count": 3, "error": "missing directory"}
    (end,) = alerts.transitions(streak(0), open_keys={"source:wiki"}, source_failures=3)
    assert end.message == "dest.alert.clear.source"


def sends(sent: int, failed: int) -> Observation:
    return Observation(sends={"telegram": SendCounts(sent=sent, failed=failed)})


@pytest.mark.parametrize(
    ("sequence", "expected"),
    [
        # 25 % of 20: starts; 15 % holds it open; 5 % ends it.
        ([(15, 5), (17, 3), (19, 1)], [True, False]),
        # Exactly 20 % is not over 20 %.
        ([(8, 2), (80, 20)], []),
        # Too few sends to tell.
        ([(1, 1), (0, 5)], []),
        # Hovering between 10 % and 20 % after the start: no second start, no end.
        ([(70, 30), (85, 15), (82, 18), (85, 15), (89, 11)], [True]),
        # Traffic stops: nothing is failing any more.
        ([(10, 10), (0, 0)], [True, False]),
    ],
)
def test_send_failures_over_20_percent(
    sequence: list[tuple[int, int]], expected: list[bool]
) -> None:
    changes = run([sends(s, f) for s, f in sequence])
    assert changes == [("sends:telegram", started) for started in expected]


def queue(minutes: float, depth: int = 7) -> Observation:
    return Observation(oldest_due=dt.timedelta(minutes=minutes), queue_depth=depth)


def test_a_stuck_queue_starts_over_30_minutes_and_ends_at_15() -> None:
    sequence = [queue(29), queue(31), queue(45), queue(20), queue(31), queue(14), queue(0)]
    assert run(sequence) == [("queue", True), ("queue", False)]
    (change,) = alerts.transitions(queue(31), open_keys=set(), source_failures=3)
    assert change.params == {"minutes": 31, "depth": 7}


def auth(*, recovered: bool) -> Observation:
    state = AuthState(reason="unauthorized", failed_at=T0, recovered=recovered)
    return Observation(auth={"slack": state})


def test_auth_starts_at_a_rejected_token_and_ends_at_the_next_successful_send() -> None:
    sequence = [Observation(), auth(recovered=False), auth(recovered=False), auth(recovered=True)]
    assert run(sequence) == [("auth:slack", True), ("auth:slack", False)]


def test_incidents_are_independent() -> None:
    both = Observation(
        source_streaks={"a": (3, "x"), "b": (0, None)},
        sends={"slack": SendCounts(sent=0, failed=10), "telegram": SendCounts(sent=10)},
        oldest_due=dt.timedelta(hours=1),
    )
    changes = alerts.transitions(both, open_keys={"source:b"}, source_failures=3)
    assert [(c.key, c.started) for c in changes] == [
        ("queue", True),
        ("sends:slack", True),
        ("source:a", True),
        ("source:b", False),
    ]


def test_an_open_incident_whose_subject_is_gone_ends() -> None:
    """A source removed from the configuration no longer shows: its incident ends."""
    assert [
        (c.key, c.started)
        for c in alerts.transitions(Observation(), open_keys={"source:old"}, source_failures=3)
    ] == [("source:old", False)]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_every_alert_has_its_text_in_both_languages(lang: str) -> None:
    from bot.i18n import has, t

    firing = Observation(
        source_streaks={"wiki": (3, "gone")},
        sends={"slack": SendCounts(sent=5, failed=5)},
        oldest_due=dt.timedelta(hours=1),
        auth={"telegram": AuthState(reason="unauthorized", failed_at=T0, recovered=False)},
    )
    started = alerts.transitions(firing, open_keys=set(), source_failures=3)
    ended = alerts.transitions(Observation(), open_keys={c.key for c in started}, source_failures=3)
    assert len(started) == len(ended) == 4
    for change in (*started, *ended):
        assert has(change.message)
        text = t(lang, change.message, **change.params)
        assert "{" not in text and change.message not in text
