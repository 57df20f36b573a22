"""The ranking rule: votes -> tag weights -> page order, and the vote buttons' actions."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.render import votes
from bot.rules import ranking

NOW = dt.datetime(2026, 12, 3, 12, 0)
TAGS = st.sampled_from(["rl", "reasoning", "robotics", "vision", "agents", "nlp"])
PAGE_TAGS = st.lists(TAGS, max_size=4).map(tuple)
VOTE = st.builds(
    ranking.Vote,
    value=st.sampled_from([ranking.UP, ranking.DOWN]),
    at=st.integers(min_value=0, max_value=200 * 24).map(lambda h: NOW - dt.timedelta(hours=h)),
    tags=PAGE_TAGS,
)


@pytest.mark.parametrize(
    ("age_days", "share"), [(0, 1.0), (30, 0.5), (60, 0.25), (90, 0.125), (-5, 1.0)]
)
def test_a_vote_counts_half_every_thirty_days(age_days: int, share: float) -> None:
    assert ranking.decay(dt.timedelta(days=age_days)) == pytest.approx(share)


def test_plus_one_per_up_and_minus_one_per_down_on_each_tag() -> None:
    found = ranking.weights(
        [
            ranking.Vote(ranking.UP, NOW, ("rl", "reasoning")),
            ranking.Vote(ranking.UP, NOW, ("rl", "rl")),  # a tag twice counts once
            ranking.Vote(ranking.DOWN, NOW - dt.timedelta(days=30), ("robotics", "rl")),
        ],
        now=NOW,
    )
    assert found == pytest.approx({"rl": 1.5, "reasoning": 1.0, "robotics": -0.5})


def test_an_up_and_a_down_on_the_same_tags_cancel_out() -> None:
    found = ranking.weights(
        [ranking.Vote(ranking.UP, NOW, ("rl",)), ranking.Vote(ranking.DOWN, NOW, ("rl",))],
        now=NOW,
    )
    assert found == {}


@settings(deadline=None)  # timing on a busy machine is no failure
@given(st.lists(VOTE, max_size=20), st.lists(PAGE_TAGS, min_size=1, max_size=8), VOTE)
def test_scores_are_monotonic_in_votes(
    before: list[ranking.Vote], pages: list[tuple[str, ...]], extra: ranking.Vote
) -> None:
    """One more 👍 never lowers a page's score, one more 👎 never raises it; the voted
    page itself moves strictly when it has tags."""
    old = ranking.weights(before, now=NOW)
    new = ranking.weights([*before, extra], now=NOW)
    for tags in [*pages, extra.tags]:
        delta = ranking.score(new, tags) - ranking.score(old, tags)
        if extra.value == ranking.UP:
            assert delta >= -1e-9
        else:
            assert delta <= 1e-9
    moved = ranking.score(new, extra.tags) - ranking.score(old, extra.tags)
    if extra.tags:
        assert moved * extra.value > 0


@settings(deadline=None)  # timing on a busy machine is no failure
@given(st.lists(VOTE, max_size=20), st.lists(PAGE_TAGS, max_size=12))
def test_a_reset_returns_the_usual_order(
    cast: list[ranking.Vote], pages: list[tuple[str, ...]]
) -> None:
    assert ranking.order(pages, {}) == list(range(len(pages)))
    ranked = ranking.order(pages, ranking.weights(cast, now=NOW))
    assert sorted(ranked) == list(range(len(pages)))  # every page once, whatever the votes


@settings(deadline=None)  # timing on a busy machine is no failure
@given(st.lists(VOTE, max_size=20), st.lists(PAGE_TAGS, max_size=12))
def test_order_is_by_score_and_ties_keep_the_usual_order(
    cast: list[ranking.Vote], pages: list[tuple[str, ...]]
) -> None:
    found = ranking.weights(cast, now=NOW)
    ranked = ranking.order(pages, found)
    scores = [ranking.score(found, pages[i]) for i in ranked]
    for i in range(len(ranked) - 1):
        assert scores[i] >= scores[i + 1]
        if scores[i] == scores[i + 1]:
            assert ranked[i] < ranked[i + 1]


@settings(deadline=None)  # timing on a busy machine is no failure
@given(st.lists(VOTE, max_size=20), st.integers(min_value=0, max_value=400))
def test_decaying_stored_weights_equals_working_them_out_later(
    cast: list[ranking.Vote], days: int
) -> None:
    later = NOW + dt.timedelta(days=days)
    stored = ranking.weights(cast, now=NOW)
    direct = ranking.weights(cast, now=later)
    aged = ranking.decayed(stored, based_at=NOW, now=later)
    for tag in direct.keys() | aged.keys():
        assert aged.get(tag, 0.0) == pytest.approx(direct.get(tag, 0.0), abs=2e-6)


def test_limit_keeps_the_best() -> None:
    pages = [("vision",), ("rl",), ("robotics",), ("rl", "reasoning")]
    found = {"rl": 2.0, "reasoning": 1.0, "robotics": -1.0}
    assert ranking.order(pages, found) == [3, 1, 0, 2]
    assert ranking.order(pages, found, limit=2) == [3, 1]


def test_top_tags_strongest_first_each_sign() -> None:
    found = {"a": 0.5, "b": 2.0, "c": -1.0, "d": -3.0, "e": 1.0}
    liked, disliked = ranking.top_tags(found, count=2)
    assert liked == [("b", 2.0), ("e", 1.0)]
    assert disliked == [("d", -3.0), ("c", -1.0)]


@pytest.mark.parametrize(
    ("data", "parsed"),
    [
        ("vote:+:12", (12, True)),
        ("vote:-:7", (7, False)),
        ("vote:*:7", None),
        ("vote:+:", None),
        ("vote:+:-3", None),
        ("vote:+:1e3", None),
        ("vote:+:١٢", None),  # Arabic-Indic digits are digits to str.isdigit
        ("vote:+:" + "9" * 19, None),
        ("vote:+:2147483647", (2147483647, True)),
        ("vote:+:2147483648", None),  # past pages.id's 32 bits
        ("vote+12", None),
        ("tog:rl", None),
        ("", None),
    ],
)
def test_vote_actions_parse_only_when_well_formed(
    data: str, parsed: tuple[int, bool] | None
) -> None:
    assert votes.parse(data) == parsed


@settings(deadline=None)  # timing on a busy machine is no failure
@given(st.integers(min_value=0, max_value=votes.MAX_PAGE_ID), st.booleans())
def test_vote_actions_round_trip_within_telegram_callback_data(page_id: int, up: bool) -> None:
    data = votes.action(page_id, up=up)
    assert len(data.encode()) <= 64
    assert votes.parse(data) == (page_id, up)
