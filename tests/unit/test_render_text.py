from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.channels.slack.payload import payload as slack_payload
from bot.i18n import CATALOGUE
from bot.models import Button, Digest, DigestItem, Page, PageText, Reply
from bot.render import text
from bot.render.text import render_digest, render_reply

DATE = dt.date(2026, 12, 3)


def make_page(
    *,
    texts: tuple[PageText, ...] = (PageText("en", "Evolution Strategies", "ES explores\nmore."),),
    url: str | None = "https://wiki.example/es",
) -> Page:
    return Page(
        source="wiki",
        key="papers/2026/es",
        texts=texts,
        tags=("rl", "reasoning"),
        url=url,
        created=dt.date(2026, 8, 29),
    )


def test_digest() -> None:
    d = Digest(
        lang="en",
        date=DATE,
        items=(
            DigestItem(make_page(), ("rl",), updated=True),
            DigestItem(make_page(texts=(PageText("ko", "진화 전략", "요약"),), url=None), ()),
        ),
    )
    assert render_digest(d) == (
        "📚 AI trends · 3 Dec 2026 · 2 pages\n"
        "\n"
        "Evolution Strategies <https://wiki.example/es> · 🔄 updated\n"
        "#rl #reasoning · matched: rl\n"
        "ES explores more.\n"
        "29 Aug 2026\n"
        "\n"
        "진화 전략 (in Korean)\n"
        "#rl #reasoning\n"
        "요약\n"
        "29 Aug 2026"
    )


def test_digest_in_korean() -> None:
    d = Digest(lang="ko", date=DATE, items=(DigestItem(make_page(), ("rl", "reasoning")),))
    assert render_digest(d).splitlines() == [
        "📚 AI 트렌드 · 2026년 12월 3일 · 페이지 1개",
        "",
        "Evolution Strategies <https://wiki.example/es> (영어)",
        "#rl #reasoning · 일치한 태그: rl, reasoning",
        "ES explores more.",
        "2026년 8월 29일",
    ]


def test_reply() -> None:
    r = Reply(
        lang="en",
        text="Broadcast preview:\n\n\nHello\n\nReaches 2 chats.",
        items=(DigestItem(make_page(url=None), ()),),
        buttons=((Button("Send", "s"), Button("Cancel", "c")),),
    )
    assert render_reply(r) == (
        "Broadcast preview:\n\nHello\n\nReaches 2 chats.\n\n"
        "Evolution Strategies\n#rl #reasoning\nES explores more.\n29 Aug 2026\n\n"
        "[Send] [Cancel]"
    )


@pytest.mark.parametrize(
    ("lang", "date", "expected"),
    [
        ("en", dt.date(2026, 1, 5), "5 Jan 2026"),
        ("en", dt.date(2026, 12, 31), "31 Dec 2026"),
        ("ko", dt.date(2026, 1, 5), "2026년 1월 5일"),
        ("xx", dt.date(2026, 1, 5), "5 Jan 2026"),  # unknown language: English
    ],
)
def test_format_date(lang: str, date: dt.date, expected: str) -> None:
    assert text.format_date(lang, date) == expected


@pytest.mark.parametrize(
    ("lang", "page_lang", "expected"),
    [
        ("en", "en", ""),
        ("en", "ko", "(in Korean)"),
        ("ko", "en", "(영어)"),
        ("ko", "ko", ""),
        ("en", "xx", "(in xx)"),
    ],
)
def test_language_note(lang: str, page_lang: str, expected: str) -> None:
    assert text.language_note(lang, page_lang) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://wiki.example/p", "https://wiki.example/p"),
        ("HTTP://wiki.example/p", "HTTP://wiki.example/p"),
        ('https://wiki.example/a b|c<d>"e', "https://wiki.example/a%20b%7Cc%3Cd%3E%22e"),
        ("  https://wiki.example/p  ", "https://wiki.example/p"),
        ("javascript:alert(1)", None),
        ("data:text/html,x", None),
        ("https:///nohost", None),
        ("https://[::1", None),
        ("https://wiki.example/\x00", None),
        ("", None),
        (None, None),
    ],
)
def test_link_url(url: str | None, expected: str | None) -> None:
    assert text.link_url(url) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("https://www.arxiv.org/rss/cs.LG", "arxiv.org"),
        ("http://feeds.example/atom", "feeds.example"),
        ("examples/wiki", ""),
        ("/srv/wiki", ""),
    ],
)
def test_source_host(source: str, expected: str) -> None:
    assert text.source_host(source) == expected


def test_entry_detail_levels_shrink() -> None:
    page = make_page(texts=(PageText("en", "T " * 500, "word " * 500),))
    it = DigestItem(page, ("rl",))
    lengths = [len(text.entry(it, lang="en", detail=d).tldr) for d in text.DETAIL_LEVELS]
    assert lengths == sorted(lengths, reverse=True)
    last = text.entry(it, lang="en", detail=text.DETAIL_LEVELS[-1])
    assert (last.url, last.tldr, last.tags, last.matched) == (None, "", "", "")
    assert len(last.title) <= text.SHORT_TITLE_LIMIT


@pytest.mark.parametrize(
    ("s", "expected"),
    [
        ("a\n\nb", ["a", "b"]),
        ("a\nb", ["a\nb"]),
        ("a\n  \n\n b \n\n", ["a", "b"]),
        ("", []),
    ],
)
def test_paragraphs(s: str, expected: list[str]) -> None:
    assert text.paragraphs(s) == expected


@given(st.text(max_size=500), st.integers(min_value=6, max_value=80))
def test_split_text_keeps_every_word(s: str, limit: int) -> None:
    def cost(ch: str) -> int:
        return 5 if ch == "&" else 1

    pieces = text.split_text(s, limit, cost=cost)
    assert all(0 < sum(cost(ch) for ch in p) <= limit for p in pieces)
    assert "".join("".join(pieces).split()) == "".join(s.split())


def test_every_render_message_in_both_languages() -> None:
    en = {k: v for k, v in CATALOGUE["en"].items() if k.startswith("render.")}
    ko = {k: v for k, v in CATALOGUE["ko"].items() if k.startswith("render.")}
    assert en.keys() == ko.keys()
    assert all(key.startswith("render.") for key in en)
    assert all(str(en[key]).strip() and str(ko[key]).strip() for key in en)


@pytest.mark.parametrize(
    ("lang", "note"),
    [
        ("en", "To get you started: recent pages for your filter"),
        ("ko", "먼저 필터에 맞는 최근 페이지를 보내 드립니다"),
    ],
)
def test_a_welcome_digest_says_it_is_to_get_you_started(lang: str, note: str) -> None:
    items = (DigestItem(make_page(), ("rl",)),)
    welcome = Digest(lang=lang, date=DATE, items=items, welcome=True)
    assert render_digest(welcome).splitlines()[1] == note
    assert note not in render_digest(Digest(lang=lang, date=DATE, items=items))


_SPOOFS = "\u202e\u2066\u2069\u200b\u2060\ufeff\u200f"


@given(st.text(alphabet=st.sampled_from([*_SPOOFS, "a", "b", "한", " ", "\u200d", "\u200c"])))
def test_titles_tags_and_tldrs_lose_bidi_and_zero_width_characters(spoof: str) -> None:
    """A page whose title, tag or TL;DR carries bidi controls or zero-width characters
    renders without them on every platform; ZWJ and ZWNJ stay."""
    import bot.channels.slack
    import bot.channels.telegram  # noqa: F401  (the platforms' renderers)
    from bot import render
    from bot.models import Platform

    page = Page(
        source="wiki",
        key="papers/2026/x",
        texts=(PageText("en", f"Title{spoof}gpj.exe", f"Tl{spoof}dr"),),
        tags=(f"rl{spoof}", "ok"),
        created=dt.date(2026, 8, 29),
    )
    d = Digest(lang="en", date=DATE, items=(DigestItem(page, (f"rl{spoof}",)),))
    for platform in Platform:
        for message in render.digest_messages(platform, d):
            shown = message.text + json.dumps(slack_payload(message).blocks, ensure_ascii=False)
            assert not set(_SPOOFS) & set(shown), platform
    kept = [ch for ch in spoof if ch in "\u200d\u200c"]
    entry = text.entry(d.items[0], lang="en")
    assert [ch for ch in entry.title if ch in "\u200d\u200c"] == kept


@pytest.mark.parametrize(
    ("lang", "updated", "expected"),
    [
        ("en", (False,), "🆕 New in AI trends"),
        ("en", (True,), "🔄 Updated in AI trends"),
        ("en", (False, True), "🆕🔄 New and updated in AI trends"),
        ("ko", (False,), "🆕 AI 트렌드 새 소식"),
        ("ko", (True,), "🔄 AI 트렌드 업데이트 소식"),
        ("ko", (True, False), "🆕🔄 AI 트렌드 새 소식과 업데이트"),
    ],
)
def test_an_instant_header_says_what_is_in_it(
    lang: str, updated: tuple[bool, ...], expected: str
) -> None:
    """An updated page does not arrive under the header for new pages."""
    items = tuple(DigestItem(make_page(), ("rl",), updated=u) for u in updated)
    d = Digest(lang=lang, date=DATE, items=items, instant=True)
    assert text.header(d) == expected
    assert render_digest(d).splitlines()[0] == expected
