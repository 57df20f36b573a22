"""The private feed as Atom 1.0: checked against RFC 4287's RELAX NG schema and its two
Schematron rules, read back with feedparser, and the conditional GET rules."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import feedparser
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from bot.models import DigestItem, Page, PageText
from bot.render import atom as feeds
from bot.rules import feeds as feed_rules

SCHEMA = etree.RelaxNG(etree.parse(str(Path(__file__).parents[1] / "fixtures/atom/atom.rng")))
A = "{http://www.w3.org/2005/Atom}"
BASE = "https://bot.example.com"


def page(
    key: str,
    *,
    url: str | None = "https://wiki.example.com/p",
    texts: tuple[PageText, ...] = (PageText("en", "Title", "The TL;DR."),),
    tags: tuple[str, ...] = ("rl", "reasoning"),
) -> Page:
    return Page(
        source="wiki", key=key, texts=texts, tags=tags, url=url, updated=dt.date(2026, 8, 29)
    )


def feed(*entries: feed_rules.FeedEntry, lang: str = "en") -> feeds.Feed:
    return feeds.Feed(
        feed_id=feeds.feed_id("0" * 64),
        title="AI trends: rl",
        author="AI Trend Notifier",
        self_url=feed_rules.feed_url(BASE, "T" * 43),
        lang=lang,
        updated=dt.datetime(2026, 8, 30, 12, 0, 5),
        entries=entries,
    )


def entry(p: Page, matched: tuple[str, ...] = ("rl",)) -> feed_rules.FeedEntry:
    return feed_rules.FeedEntry(
        item=DigestItem(page=p, matched=matched), updated=dt.datetime(2026, 8, 29)
    )


def check_atom(body: bytes) -> etree._Element:
    """The document is well-formed Atom 1.0: the RFC's schema and its Schematron rules."""
    root = etree.fromstring(body)
    SCHEMA.assertValid(root)
    if root.find(f"{A}author") is None:
        assert all(e.find(f"{A}author") is not None for e in root.iter(f"{A}entry"))
    for e in root.iter(f"{A}entry"):
        alternate = [
            link for link in e.iter(f"{A}link") if link.get("rel", "alternate") == "alternate"
        ]
        assert e.find(f"{A}content") is not None or alternate
    return root


def test_a_feed_is_atom_and_feedparser_reads_every_field() -> None:
    ko = PageText("ko", "제목", "한국어 요약.")
    en = PageText("en", "Title", "English TL;DR.")
    body = feeds.render(
        feed(
            entry(page("a", texts=(en, ko)), matched=("rl", "reasoning")),
            entry(page("b", url=None, texts=(en,)), matched=("rl",)),
            lang="ko",
        )
    )
    check_atom(body)
    parsed = feedparser.parse(body)
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    assert parsed.feed.title == "AI trends: rl"
    assert [link.href for link in parsed.feed.links if link.rel == "self"] == [
        f"{BASE}/feeds/{'T' * 43}.atom"
    ]
    first, second = parsed.entries
    assert first.title == "제목"  # the chat's language, where the page has it
    assert first.summary == "한국어 요약."
    assert first.link == "https://wiki.example.com/p"
    assert [tag.term for tag in first.tags] == ["rl", "reasoning"]
    assert first.id == feeds.entry_id("wiki", "a")
    assert second.title == "Title"  # no Korean version: the one the page has
    assert second.content[0].value == "English TL;DR."  # no link: the text is the content
    assert second.updated == "2026-08-29T00:00:00Z"


def test_an_empty_feed_is_atom() -> None:
    parsed = feedparser.parse(check_atom_body := feeds.render(feed()))
    check_atom(check_atom_body)
    assert parsed.entries == []
    assert parsed.feed.updated == "2026-08-30T12:00:05Z"


def test_markup_and_characters_xml_forbids_are_escaped_or_dropped() -> None:
    text = PageText("en", "<b>A & B</b> \x00\x1b", 'x < y ]]> \x08 "q"')
    body = feeds.render(feed(entry(page("c", texts=(text,), url="https://w.example/?a=1&b=2"))))
    root = check_atom(body)
    assert root.find(f"{A}entry/{A}title").text == "<b>A & B</b> "
    assert root.find(f"{A}entry/{A}summary").text == 'x < y ]]>  "q"'
    parsed = feedparser.parse(body)
    assert not parsed.bozo
    assert parsed.entries[0].link == "https://w.example/?a=1&b=2"


@settings(max_examples=60, deadline=None)
@given(
    title=st.text(max_size=80),
    tldr=st.text(max_size=200),
    tags=st.lists(st.from_regex(r"[a-z0-9][a-z0-9._-]{0,20}", fullmatch=True), max_size=5),
)
def test_any_page_text_gives_a_valid_feed(title: str, tldr: str, tags: list[str]) -> None:
    body = feeds.render(feed(entry(page("k", texts=(PageText("en", title, tldr),)), tuple(tags))))
    root = check_atom(body)
    assert [c.get("term") for c in root.iter(f"{A}category")] == tags


def test_the_same_input_gives_the_same_bytes() -> None:
    one = feeds.render(feed(entry(page("a"))))
    assert one == feeds.render(feed(entry(page("a"))))
    assert feeds.etag(one) == feeds.etag(feeds.render(feed(entry(page("a")))))
    assert feeds.etag(one) != feeds.etag(feeds.render(feed(entry(page("b")))))


def test_tokens_are_random_256_bits_and_only_their_shape_is_accepted() -> None:
    tokens = {feed_rules.new_token() for _ in range(100)}
    assert len(tokens) == 100
    for token in tokens:
        assert feed_rules.token_from_path(f"{token}.atom") == token
        assert len(feed_rules.token_hash(token)) == 64
    token = next(iter(tokens))
    for name in (
        token,
        f"{token}.rss",
        f"{token}x.atom",
        f"{token[:-1]}.atom",
        "../x.atom",
        f"{token[:-1]}%.atom",
        ".atom",
        "",
        f"{token}.atom.atom",
    ):
        assert feed_rules.token_from_path(name) is None, name


LAST = dt.datetime(2026, 8, 30, 12, 0, 5)
TAG = '"abc"'


@pytest.mark.parametrize(
    ("if_none_match", "if_modified_since", "expected"),
    [
        (None, None, False),
        ('"abc"', None, True),
        ('W/"abc"', None, True),
        ('"x", "abc"', None, True),
        ("*", None, True),
        ('"other"', None, False),
        # If-None-Match wins over a matching If-Modified-Since (RFC 9110 13.2.2).
        ('"other"', "Sun, 30 Aug 2026 12:00:05 GMT", False),
        (None, "Sun, 30 Aug 2026 12:00:05 GMT", True),
        (None, "Sun, 30 Aug 2026 13:00:00 GMT", True),
        (None, "Sun, 30 Aug 2026 12:00:04 GMT", False),
        (None, "not a date", False),
        (None, "", False),
        (None, "Sun, 99 Foo 2026 12:00:04 GMT", False),
    ],
)
def test_conditional_get(
    if_none_match: str | None, if_modified_since: str | None, expected: bool
) -> None:
    assert (
        feeds.not_modified(
            tag=TAG,
            last_modified=LAST,
            if_none_match=if_none_match,
            if_modified_since=if_modified_since,
        )
        is expected
    )


def test_http_date() -> None:
    assert feeds.http_date(LAST) == "Sun, 30 Aug 2026 12:00:05 GMT"


@pytest.mark.parametrize(
    "broken",
    [
        lambda root: root.remove(root.find(f"{A}id")),
        lambda root: setattr(root.find(f"{A}updated"), "text", "30 Aug 2026"),
        lambda root: root.find(f"{A}entry").remove(root.find(f"{A}entry/{A}title")),
        lambda root: root.find(f"{A}entry/{A}category").attrib.pop("term"),
    ],
)
def test_the_schema_check_rejects_what_rfc_4287_forbids(broken: object) -> None:
    root = etree.fromstring(feeds.render(feed(entry(page("a")))))
    broken(root)  # type: ignore[operator]
    with pytest.raises(etree.DocumentInvalid):
        SCHEMA.assertValid(root)


def test_feed_addresses_are_redacted_from_logs() -> None:
    from bot.logs import Redactor

    token = feed_rules.new_token()
    url = feed_rules.feed_url(BASE, token)
    text = Redactor(()).redact(f"sendMessage with parameters {{'text': 'feed: {url}'}}")
    assert token not in text and "/feeds/[redacted].atom" in text
