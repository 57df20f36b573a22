from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.errors import FilterError
from bot.models import Filter
from bot.rules import filters
from bot.rules.filters import FilterItem, add, format_filter, parse_filter, parse_items, remove
from bot.tags import fold_tag


def F(
    any_of: str = "",
    required: str = "",
    excluded: str = "",
    *,
    everything: bool = False,
) -> Filter:
    return Filter(
        any_of=frozenset(any_of.split()),
        required=frozenset(required.split()),
        excluded=frozenset(excluded.split()),
        everything=everything,
    )


# --- parse_items -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["rl"], [("any", "rl")]),
        (["+rl"], [("required", "rl")]),
        (["-robotics"], [("excluded", "robotics")]),
        (["*"], [("everything", "")]),
        (["rl", "reasoning"], [("any", "rl"), ("any", "reasoning")]),
        (["rl reasoning"], [("any", "rl"), ("any", "reasoning")]),
        (["rl,reasoning"], [("any", "rl"), ("any", "reasoning")]),
        (["rl, +reasoning ,-x"], [("any", "rl"), ("required", "reasoning"), ("excluded", "x")]),
        ([" rl\t\n"], [("any", "rl")]),
        (["Post-Training"], [("any", "post-training")]),
        (["RL"], [("any", "rl")]),
        (["ＲＬ"], [("any", "rl")]),  # fullwidth: NFKC
        (["Straße"], [("any", "strasse")]),  # casefold
        (["강화학습"], [("any", "강화학습")]),
        (["+LLM.v2_x"], [("required", "llm.v2_x")]),
        ([".net", "_x"], [("any", ".net"), ("any", "_x")]),
        (["हिंदी"], [("any", "हिंदी")]),  # letters with combining marks
        (["a" * 64], [("any", "a" * 64)]),
        (["rl", "", " ", ","], [("any", "rl")]),
    ],
)
def test_parse_items(args: list[str], expected: list[tuple[filters.Kind, str]]) -> None:
    assert parse_items(args) == tuple(FilterItem(kind, tag) for kind, tag in expected)


@pytest.mark.parametrize(
    ("args", "item", "reason"),
    [
        ([], "", "empty"),
        ([""], "", "empty"),
        (["  ,  "], "", "empty"),
        (["a" * 65], "a" * 65, "too_long"),
        (["+" + "a" * 65], "+" + "a" * 65, "too_long"),
        (["rl!"], "rl!", "bad_chars"),
        (["<b>"], "<b>", "bad_chars"),
        (["**"], "**", "bad_chars"),
        (["rl*"], "rl*", "bad_chars"),
        (["--x"], "--x", "bad_chars"),
        (["+-x"], "+-x", "bad_chars"),
        (["a\u200bb"], "a\u200bb", "bad_chars"),  # zero-width space
        (["\u0301x"], "\u0301x", "bad_chars"),  # a mark with no letter before it
        (["+"], "+", "bare_sign"),
        (["-"], "-", "bare_sign"),
        (["+*"], "+*", "signed_star"),
        (["-*"], "-*", "signed_star"),
        # the first bad word is named, whatever follows
        (["rl", "+", "x!"], "+", "bare_sign"),
        (["rl x! +"], "x!", "bad_chars"),
    ],
)
def test_parse_items_errors(args: list[str], item: str, reason: str) -> None:
    with pytest.raises(FilterError) as info:
        parse_items(args)
    assert (info.value.item, info.value.reason) == (item, reason)
    assert info.value.reason in filters.REASONS


# --- add / remove ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "words", "after"),
    [
        (F(), "rl reasoning", F("rl reasoning")),
        (F("rl"), "+rl", F(required="rl")),
        (F("rl"), "-rl", F(excluded="rl")),
        (F(required="rl"), "rl", F(required="rl")),  # a bare tag never weakens +rl
        (F(required="rl"), "-rl rl", F("rl")),
        (F(), "+rl rl", F(required="rl")),
        (F(excluded="rl"), "+rl", F(required="rl")),
        (F("rl"), "rl", F("rl")),
        (F(), "rl +rl -rl", F(excluded="rl")),
        (F("rl"), "*", F("rl", everything=True)),
        (F(), "* -robotics", F(excluded="robotics", everything=True)),
        (F("a", "b", "c"), "+a -b c", F("c", "a", "b")),
    ],
)
def test_add(before: Filter, words: str, after: Filter) -> None:
    assert add(before, parse_items([words])) == after


def test_add_keeps_each_tag_in_one_bucket() -> None:
    f = add(F("a b", "c", "d"), parse_items(["+a -c b d"]))
    assert f == F("b d", "a", "c")
    assert not (f.any_of & f.required or f.any_of & f.excluded or f.required & f.excluded)


def test_add_up_to_max_tags() -> None:
    tags = [f"t{i}" for i in range(filters.MAX_TAGS)]
    f = add(Filter(), parse_items(tags))
    assert len(f.tags) == filters.MAX_TAGS
    # moving a tag between buckets and "*" add nothing to the count
    assert add(f, parse_items(["+t0 -t1 *"])).tags == f.tags


def test_add_over_max_tags_applies_nothing() -> None:
    f = add(Filter(), parse_items([f"t{i}" for i in range(filters.MAX_TAGS - 1)]))
    with pytest.raises(FilterError) as info:
        add(f, parse_items(["+t0 new1 new2"]))
    assert (info.value.item, info.value.reason) == ("new2", "too_many")
    assert len(f.tags) == filters.MAX_TAGS - 1  # the caller's filter is untouched


@pytest.mark.parametrize(
    ("before", "words", "after"),
    [
        (F("rl reasoning"), "rl", F("reasoning")),
        (F(required="rl"), "rl", F()),
        (F(excluded="rl"), "rl", F()),
        (F("rl"), "-rl", F()),
        (F("rl"), "+rl", F()),
        (F(excluded="rl"), "+RL", F()),
        (F("rl"), "unknown", F("rl")),
        (F("rl", everything=True), "*", F("rl")),
        (F("a b", "c", "d", everything=True), "a, c d *", F("b")),
    ],
)
def test_remove(before: Filter, words: str, after: Filter) -> None:
    assert remove(before, parse_items([words])) == after


# --- matching ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("f", "tags", "expected"),
    [
        (F(), ["rl"], False),  # the empty filter matches nothing
        (F(excluded="robotics"), ["rl"], False),  # only excluded tags: still empty
        (F("rl reasoning"), ["rl"], True),
        (F("rl reasoning"), ["vision"], False),
        (F("rl reasoning"), [], False),
        (F("rl"), ["RL"], True),  # case-insensitive on the page side too
        (F("post-training"), ["Post-Training"], True),
        (F(required="rl"), ["rl", "x"], True),
        (F(required="rl"), ["x"], False),
        (F(required="rl llm"), ["rl"], False),
        (F("a b", "rl"), ["a", "rl"], True),
        (F("a b", "rl"), ["rl"], False),  # any-of set and none carried
        (F("a b", "rl"), ["a"], False),  # required missing
        (F("rl", excluded="robotics"), ["rl", "robotics"], False),
        (F("rl", excluded="robotics"), ["rl", "Robotics"], False),
        (F(everything=True), [], True),
        (F(everything=True), ["anything"], True),
        (F(excluded="robotics", everything=True), ["robotics"], False),
        (F(required="rl", everything=True), ["x"], False),
        (F(required="rl", everything=True), ["rl"], True),
        (F("x", everything=True), ["y"], True),  # "*" wins over any-of
    ],
)
def test_matches(f: Filter, tags: list[str], expected: bool) -> None:
    assert filters.matches(f, tags) is expected


@pytest.mark.parametrize(
    ("f", "tags", "expected"),
    [
        (F("rl reasoning"), ["reasoning", "x", "RL"], ("reasoning", "RL")),
        (F("rl", "llm", "robotics"), ["llm", "robotics", "rl"], ("llm", "rl")),
        (F(everything=True), ["rl", "x"], ()),
        (F("rl", everything=True), ["x", "rl"], ("rl",)),
        (F("rl"), ["rl", "RL", "rl"], ("rl",)),
        (F("rl"), [], ()),
    ],
)
def test_matched_tags(f: Filter, tags: list[str], expected: tuple[str, ...]) -> None:
    assert filters.matched_tags(f, tags) == expected


# --- canonical text ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("f", "text"),
    [
        (F(), ""),
        (F("reasoning rl", "post-training", "robotics"), "reasoning rl +post-training -robotics"),
        (F(everything=True), "*"),
        (F("b a", excluded="z", everything=True), "* a b -z"),
        (F(required="y x"), "+x +y"),
    ],
)
def test_format_filter(f: Filter, text: str) -> None:
    assert format_filter(f) == text
    assert parse_filter(text) == f


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_parse_filter_blank(text: str) -> None:
    assert parse_filter(text) == Filter()


def test_parse_filter_errors_like_parse_items() -> None:
    with pytest.raises(FilterError) as info:
        parse_filter("rl +")
    assert info.value.reason == "bare_sign"


# --- properties --------------------------------------------------------------------------

_ALPHABET = "abcxyz0189-_.강화학습가ßé"
_tags = st.text(_ALPHABET, min_size=1, max_size=filters.MAX_TAG_LENGTH).filter(
    lambda s: not s.startswith("-")
)


def _valid(tag: str) -> bool:
    try:
        return parse_items([tag]) == (FilterItem("any", tag),)
    except FilterError:
        return False


# tags drawn from all of Unicode, kept when they are valid normalised tags
_unicode_tags = st.text(
    st.characters(categories=["L", "M", "Nd"], include_characters="-_."),
    min_size=1,
    max_size=20,
).filter(_valid)


@st.composite
def valid_filters(draw: st.DrawFn) -> Filter:
    tags = draw(st.sets(_tags.map(fold_tag).filter(_valid) | _unicode_tags, max_size=50))
    buckets: dict[str, set[str]] = {"any": set(), "required": set(), "excluded": set()}
    for tag in sorted(tags):
        buckets[draw(st.sampled_from(sorted(buckets)))].add(tag)
    return Filter(
        any_of=frozenset(buckets["any"]),
        required=frozenset(buckets["required"]),
        excluded=frozenset(buckets["excluded"]),
        everything=draw(st.booleans()),
    )


@given(valid_filters())
def test_format_then_parse_is_identity(f: Filter) -> None:
    assert parse_filter(format_filter(f)) == f


@given(st.lists(st.text(max_size=80), max_size=4))
def test_parse_items_returns_or_raises_filter_error(args: list[str]) -> None:
    try:
        items = parse_items(args)
    except FilterError as e:
        assert e.reason in filters.REASONS
    else:
        assert items
        for item in items:
            assert (item.tag == "") == (item.kind == "everything")
            if item.tag:
                assert len(item.tag) <= filters.MAX_TAG_LENGTH
                assert fold_tag(item.tag) == item.tag


_filter_words = st.lists(
    st.one_of(
        _tags,
        _tags.map(lambda t: "+" + t),
        _tags.map(lambda t: "-" + t),
        st.just("*"),
        st.text(max_size=6),
    ),
    max_size=8,
).map(" ".join)


@given(st.one_of(st.text(max_size=80), _filter_words))
def test_format_of_parse_is_stable(s: str) -> None:
    try:
        f = parse_filter(s)
    except FilterError as e:
        assert e.reason in filters.REASONS
        return
    canonical = format_filter(f)
    assert parse_filter(canonical) == f
    assert format_filter(parse_filter(canonical)) == canonical


@given(valid_filters(), st.lists(st.sampled_from(["a", "b", "c", "A", "x"]), max_size=5))
def test_matched_tags_only_when_filter_wants_them(f: Filter, tags: list[str]) -> None:
    matched = filters.matched_tags(f, tags)
    assert all(fold_tag(t) in f.any_of | f.required for t in matched)
    if filters.matches(f, tags) and f.any_of and not f.everything:
        assert matched
