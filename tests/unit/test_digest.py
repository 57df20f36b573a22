from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.models import Digest, Page, PageText
from bot.rules.digest import ELLIPSIS, TLDR_LIMIT, build_digest, truncate
from bot.rules.filters import parse_filter

TODAY = dt.date(2026, 12, 3)

# --- truncate ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("hello world", 20, "hello world"),
        ("hello world", 11, "hello world"),
        ("hello world", 10, "hello…"),
        ("hello world", 7, "hello…"),
        ("hello world again", 12, "hello world…"),  # a space right at the cut
        ("hello     world", 10, "hello…"),  # no trailing whitespace before the ellipsis
        ("abcdefghij", 5, "abcd…"),  # one long word: hard cut
        ("a bcdefghijklmnop", 8, "a bcdef…"),  # a boundary too early: hard cut
        ("강화학습은보상으로배운다", 6, "강화학습은…"),  # CJK without spaces
        ("강화 학습은 보상으로 배운다", 10, "강화 학습은…"),
        ("x", 0, ""),
        ("xy", 1, ELLIPSIS),
        ("", 5, ""),
        ("e\u0301e\u0301e\u0301e\u0301", 4, "e\u0301…"),  # keeps a letter with its accent
        ("ab👩\u200d💻cd", 4, "ab…"),  # never ends in a ZWJ or splits the sequence
        ("ab👍🏽cd", 4, "ab…"),  # keeps the skin-tone modifier with its emoji
        ("ab\ud83d\ude00cd", 4, "ab…"),  # a surrogate pair (surrogatepass text) kept whole
    ],
)
def test_truncate(text: str, limit: int, expected: str) -> None:
    assert truncate(text, limit) == expected


def test_truncate_with_cost() -> None:
    def cost(ch: str) -> int:
        return 5 if ch == "&" else 1

    assert truncate("a & b & c", 17, cost=cost) == "a & b & c"
    assert truncate("a & b & c", 12, cost=cost) == "a & b…"
    assert truncate("&&&&", 11, cost=cost) == "&&…"
    assert truncate("&&&&", 5, cost=cost) == "…"


@given(st.text(max_size=600), st.integers(min_value=0, max_value=500))
def test_truncate_properties(text: str, limit: int) -> None:
    out = truncate(text, limit)
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text
    elif out:
        assert out.endswith(ELLIPSIS)
        head = out[: -len(ELLIPSIS)]
        assert text.startswith(head)
        assert head == head.rstrip()


@given(st.text(max_size=300), st.integers(min_value=0, max_value=300))
def test_truncate_with_cost_stays_within_limit(text: str, limit: int) -> None:
    def cost(ch: str) -> int:
        return {"&": 5, "<": 4, ">": 4}.get(ch, 2 if ord(ch) > 0xFFFF else 1)

    out = truncate(text, limit, cost=cost)
    assert sum(cost(ch) for ch in out) <= limit


# --- build_digest ------------------------------------------------------------------------


def page(
    key: str,
    tags: tuple[str, ...] = ("rl",),
    *,
    created: dt.date | None = None,
    updated: dt.date | None = None,
    source: str = "wiki",
) -> Page:
    return Page(
        source=source,
        key=key,
        texts=(PageText("en", key.title(), f"About {key}."),),
        tags=tags,
        created=created,
        updated=updated,
    )


def keys(d: Digest | None) -> list[str]:
    assert d is not None
    return [item.page.key for item in d.items]


def test_build_digest_keeps_matching_pages_with_matched_tags() -> None:
    d = build_digest(
        lang="ko",
        filter=parse_filter("rl reasoning -robotics"),
        candidates=[
            (page("a", ("rl", "robotics")), False),
            (page("b", ("vision",)), False),
            (page("c", ("Reasoning", "rl", "llm")), True),
        ],
        today=TODAY,
    )
    assert d is not None
    assert (d.lang, d.date, d.instant) == ("ko", TODAY, False)
    assert [(i.page.key, i.matched, i.updated) for i in d.items] == [
        ("c", ("Reasoning", "rl"), True)
    ]


@pytest.mark.parametrize(
    "candidates",
    [
        [],
        [(page("a", ("vision",)), False)],
        [(Page(source="wiki", key="empty", texts=(), tags=("rl",)), False)],
    ],
)
def test_build_digest_none_when_nothing_left(candidates: list[tuple[Page, bool]]) -> None:
    assert (
        build_digest(lang="en", filter=parse_filter("rl"), candidates=candidates, today=TODAY)
        is None
    )


def test_build_digest_none_for_empty_filter() -> None:
    d = build_digest(
        lang="en", filter=parse_filter(""), candidates=[(page("a"), False)], today=TODAY
    )
    assert d is None


def test_build_digest_order() -> None:
    d1, d2, d3 = dt.date(2026, 1, 1), dt.date(2026, 2, 1), dt.date(2026, 3, 1)
    candidates = [
        (page("old-one-tag", ("rl",), created=d1), False),
        (page("undated-two-tags", ("rl", "llm")), False),
        (page("new-one-tag", ("rl",), created=d1, updated=d3), False),
        (page("two-tags", ("rl", "llm"), created=d2), False),
        (page("b-same", ("rl",), created=d2), False),
        (page("a-same", ("rl",), created=d2), False),
        (page("a-same", ("rl",), created=d2, source="feed"), False),
    ]
    d = build_digest(lang="en", filter=parse_filter("rl llm"), candidates=candidates, today=TODAY)
    assert d is not None
    assert keys(d) == [
        "two-tags",
        "undated-two-tags",
        "new-one-tag",
        "a-same",  # feed < wiki
        "a-same",
        "b-same",
        "old-one-tag",
    ]
    assert [i.page.source for i in d.items][3:5] == ["feed", "wiki"]


def test_build_digest_keeps_a_page_once() -> None:
    p = page("a")
    d = build_digest(
        lang="en", filter=parse_filter("*"), candidates=[(p, False), (p, True)], today=TODAY
    )
    assert d is not None
    assert [(i.page.key, i.updated, i.matched) for i in d.items] == [("a", False, ())]


def test_build_digest_instant() -> None:
    d = build_digest(
        lang="en",
        filter=parse_filter("rl"),
        candidates=[(page("a"), True)],
        today=TODAY,
        instant=True,
    )
    assert d is not None
    assert d.instant
    assert d.items[0].updated


def test_tldr_limit_is_a_few_lines() -> None:
    assert 200 <= TLDR_LIMIT <= 600
