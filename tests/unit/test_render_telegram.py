from __future__ import annotations

import datetime as dt
import html
import json
import re
from dataclasses import replace
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot import render as render_api
from bot.channels.telegram import html as telegram
from bot.channels.telegram import rich as telegram_rich
from bot.channels.telegram.html import MAX_MESSAGE_CHARS, render_digest, render_reply, reply_markup
from bot.channels.telegram.payload import payload as telegram_payload
from bot.i18n import clean
from bot.models import Button, Digest, DigestItem, Page, PageText, Platform, Reply
from bot.rules.digest import ELLIPSIS, TLDR_LIMIT
from tests.fakes.telegram_api import check_rich_message
from tests.strategies import LONG_TEXT, TEXT, digest_items

ALLOWED_TAGS = {"b", "strong", "i", "em", "u", "s", "a", "code", "pre", "blockquote"}
DATE = dt.date(2026, 12, 3)


class TelegramHTML(HTMLParser):
    """Fails on anything the Bot API's HTML parser would reject."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        assert tag in ALLOWED_TAGS, tag
        if tag == "a":
            assert [name for name, _ in attrs] == ["href"]
            assert re.match(r"https?://", attrs[0][1] or "")
        elif tag == "blockquote":
            # only the expandable kind (Bot API 7.4), and never nested in another quotation
            assert attrs == [("expandable", None)], attrs
        else:
            assert attrs == []
        assert tag not in self.stack, f"nested <{tag}>"
        self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raise AssertionError(f"self-closing <{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack.pop() == tag, f"unbalanced </{tag}>"

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        raise AssertionError("comment")

    def handle_decl(self, decl: str) -> None:
        raise AssertionError("declaration")

    def handle_pi(self, data: str) -> None:
        raise AssertionError("processing instruction")


def check_message(message: str) -> str:
    """Asserts ``message`` is valid Telegram HTML within the limit; returns its visible text."""
    assert message.strip()
    assert telegram.utf16_len(message) <= MAX_MESSAGE_CHARS
    assert len(message) <= MAX_MESSAGE_CHARS
    without_tags = re.sub(
        r'</?(b|i)>|<a href="[^"<>]*">|</a>|<blockquote expandable>|</blockquote>', "", message
    )
    assert "<" not in without_tags and ">" not in without_tags
    assert not re.search(r"&(?!(amp|lt|gt|quot|#\d+|#x[0-9a-fA-F]+);)", message)
    parser = TelegramHTML()
    parser.feed(message)
    parser.close()
    assert parser.stack == []
    return "".join(parser.text)


def esc(s: str) -> str:
    return html.escape(s, quote=False)


def make_page(
    key: str = "papers/2026/2608.27351-es",
    *,
    texts: tuple[PageText, ...] = (PageText("en", "Evolution Strategies", "ES explores more."),),
    tags: tuple[str, ...] = ("rl", "reasoning", "post-training"),
    url: str | None = "https://wiki.example/papers/2608.27351",
    created: dt.date | None = dt.date(2026, 8, 29),
) -> Page:
    return Page(source="wiki", key=key, texts=texts, tags=tags, url=url, created=created)


def item(
    page: Page | None = None, matched: tuple[str, ...] = ("rl",), updated: bool = False
) -> DigestItem:
    return DigestItem(page=page or make_page(), matched=matched, updated=updated)


def digest_of(*items: DigestItem, lang: str = "en", instant: bool = False) -> Digest:
    return Digest(lang=lang, date=DATE, items=items, instant=instant)


# --- examples ----------------------------------------------------------------------------


def test_digest_message() -> None:
    [message] = render_digest(digest_of(item(matched=("rl", "reasoning"))))
    check_message(message)
    assert message == (
        "<b>📚 AI trends · 3 Dec 2026 · 1 page</b>\n\n"
        '<a href="https://wiki.example/papers/2608.27351"><b>Evolution Strategies</b></a>\n'
        "#rl #reasoning #post-training · <i>matched: rl, reasoning</i>\n"
        "<blockquote expandable>ES explores more.\n"
        "<i>29 Aug 2026</i></blockquote>"
    )


def test_digest_header_in_korean() -> None:
    d = digest_of(item(), item(make_page("other")), lang="ko")
    [message] = render_digest(d)
    assert message.startswith("<b>📚 AI 트렌드 · 2026년 12월 3일 · 페이지 2개</b>")
    assert "일치한 태그: rl" in message
    assert "2026년 8월 29일" in message


def test_instant_header() -> None:
    [message] = render_digest(digest_of(item(), instant=True))
    assert message.startswith("<b>🆕 New in AI trends</b>\n\n")


@pytest.mark.parametrize(
    ("lang", "texts", "shown", "note"),
    [
        ("en", (PageText("ko", "진화 전략", "요약"),), "진화 전략", "(in Korean)"),
        ("ko", (PageText("en", "ES", "Summary"),), "ES", "(영어)"),
        ("ko", (PageText("en", "ES", "S"), PageText("ko", "진화", "요약")), "진화", None),
        ("en", (PageText("en", "ES", "S"), PageText("ko", "진화", "요약")), "ES", None),
    ],
)
def test_page_language(
    lang: str, texts: tuple[PageText, ...], shown: str, note: str | None
) -> None:
    [message] = render_digest(digest_of(item(make_page(texts=texts)), lang=lang))
    assert f"<b>{shown}</b>" in message
    if note:
        assert f"<i>{note}</i>" in message
    else:
        assert "(in " not in message and "(영어)" not in message and "(한국어)" not in message


def test_updated_marker() -> None:
    [message] = render_digest(digest_of(item(updated=True)))
    assert "</a> · 🔄 updated\n" in message
    [message] = render_digest(digest_of(item(updated=True), lang="ko"))
    assert "🔄 업데이트됨" in message


def test_everything_filter_has_no_matched_label() -> None:
    [message] = render_digest(digest_of(item(matched=())))
    assert "matched" not in message
    assert "#rl #reasoning #post-training\n" in message


@pytest.mark.parametrize(
    ("url", "linked"),
    [
        ("https://wiki.example/p", True),
        ("http://wiki.example/p?a=1&b=2", True),
        ('https://wiki.example/"onmouseover="x', True),  # quote percent-encoded, no breakout
        ("javascript:alert(1)", False),
        ("ftp://wiki.example/p", False),
        ("/relative/path", False),
        ("https://", False),
        ("https://wiki.example/\nx", False),
        (None, False),
        ("https://wiki.example/" + "a" * 5000, False),
    ],
)
def test_links_only_for_http_urls(url: str | None, linked: bool) -> None:
    [message] = render_digest(digest_of(item(make_page(url=url))))
    check_message(message)
    assert ("<a href=" in message) is linked
    assert "<b>Evolution Strategies</b>" in message


def test_everything_from_the_page_is_escaped() -> None:
    page = make_page(
        texts=(PageText("en", '<script>&amp; "x"</script>', "a < b && c > d <b>bold</b>"),),
        tags=("<i>",),
        url="https://wiki.example/?a=1&b=<2>",
    )
    [message] = render_digest(digest_of(item(page, matched=("<i>",))))
    check_message(message)
    assert '&lt;script&gt;&amp;amp; "x"&lt;/script&gt;' in message
    assert "a &lt; b &amp;&amp; c &gt; d &lt;b&gt;bold&lt;/b&gt;" in message
    assert 'href="https://wiki.example/?a=1&amp;b=%3C2%3E"' in message


def test_tldr_is_truncated() -> None:
    tldr = "word " * 1000
    [message] = render_digest(digest_of(item(make_page(texts=(PageText("en", "T", tldr),)))))
    line = message.split("\n")[-2].removeprefix("<blockquote expandable>")
    assert line.endswith("…")
    assert len(line) <= TLDR_LIMIT


def test_long_digest_is_split_at_item_boundaries() -> None:
    items = [
        item(make_page(f"k{i}", texts=(PageText("en", f"Title {i}", "x " * 300),)))
        for i in range(40)
    ]
    messages = render_digest(digest_of(*items))
    assert len(messages) > 1
    for n, message in enumerate(messages, start=1):
        check_message(message)
        assert message.endswith(f"\n\n({n}/{len(messages)})")
    assert messages[0].startswith("<b>📚 AI trends")
    assert not messages[1].startswith("<b>📚")
    joined = "".join(messages)
    positions = [joined.index(f"<b>Title {i}</b>") for i in range(40)]
    assert positions == sorted(positions)


def test_single_huge_item_fits_one_message() -> None:
    page = make_page(
        texts=(PageText("en", "&" * 5000, "&" * 10_000),),
        tags=tuple("&" * 60 + str(i) for i in range(200)),
        url="https://wiki.example/?" + "&" * 2000,
    )
    messages = render_digest(digest_of(item(page, matched=page.tags)))
    assert len(messages) == 1
    check_message(messages[0])


# --- replies -----------------------------------------------------------------------------


def test_reply_keeps_paragraphs_and_escapes() -> None:
    r = Reply(lang="en", text="Filter: rl +x\n\nA <tag> & more\nsecond line\n\n\n\nlast")
    assert render_reply(r) == ["Filter: rl +x\n\nA &lt;tag&gt; &amp; more\nsecond line\n\nlast"]


def test_reply_with_items() -> None:
    r = Reply(lang="en", text="Latest:", items=(item(), item(make_page("b"))))
    [message] = render_reply(r)
    check_message(message)
    assert message.startswith("Latest:\n\n<a href=")
    assert message.count("<b>Evolution Strategies</b>") == 2


def test_empty_reply_has_no_message() -> None:
    assert render_reply(Reply(lang="en", text="  \n\n ")) == []


def test_long_reply_text_is_split_without_losing_words() -> None:
    words = [f"w{i}&" for i in range(3000)]
    r = Reply(lang="ko", text=" ".join(words))
    messages = render_reply(r)
    assert len(messages) > 1
    visible = ""
    for n, message in enumerate(messages, start=1):
        text = check_message(message)
        suffix = f"\n\n({n}/{len(messages)})"
        assert text.endswith(suffix)
        visible += text.removesuffix(suffix) + " "
    assert visible.split() == words


def test_reply_markup() -> None:
    r = Reply(
        lang="en",
        text="Send?",
        buttons=((Button("Send", "bc:send:42"), Button("Cancel", "bc:cancel:42")),),
    )
    assert reply_markup(r) == {
        "inline_keyboard": [
            [
                {"text": "Send", "callback_data": "bc:send:42"},
                {"text": "Cancel", "callback_data": "bc:cancel:42"},
            ]
        ]
    }
    assert reply_markup(Reply(lang="en", text="x")) is None
    assert reply_markup(Reply(lang="en", text="x", buttons=((),))) is None


# --- properties --------------------------------------------------------------------------

# Titles are one line of a hundred characters at most, as the store keeps them.
_TITLES = TEXT.map(lambda s: s[:100]).filter(lambda s: s.strip())


def _digest_items() -> st.SearchStrategy[DigestItem]:
    return digest_items(titles=_TITLES)


def _collapse(s: str) -> str:
    return " ".join(s.split())


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_digest_items(), min_size=1, max_size=25),
    st.sampled_from(["en", "ko"]),
    st.booleans(),
)
def test_any_digest_renders_to_valid_messages(
    items: list[DigestItem], lang: str, instant: bool
) -> None:
    messages = render_digest(Digest(lang=lang, date=DATE, items=tuple(items), instant=instant))
    assert messages
    for message in messages:
        check_message(message)
    joined = "\n".join(messages)
    for it in items:
        # As the renderer shows it: display-spoofing characters removed, else the key, "…".
        title = (
            _collapse(clean(it.page.text(lang).title)) or _collapse(clean(it.page.key)) or ELLIPSIS
        )
        assert f"<b>{esc(title)}</b>" in joined


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(TEXT, LONG_TEXT, LONG_TEXT.map(lambda s: s * 2), st.just("a&b<c> " * 3000)),
    st.lists(_digest_items(), max_size=5),
)
def test_any_reply_renders_to_valid_messages(text: str, items: list[DigestItem]) -> None:
    messages = render_reply(Reply(lang="en", text=text, items=tuple(items)))
    visible = []
    for message in messages:
        visible.append(check_message(message))
    if len(messages) > 1:
        visible = [v.rsplit("\n\n", 1)[0] for v in visible]
    if not items:
        # nothing of the text is lost, only whitespace at the cuts
        assert "".join("".join(visible).split()) == "".join(text.split())


@pytest.mark.parametrize(
    ("lang", "note"),
    [
        ("en", "To get you started: recent pages for your filter"),
        ("ko", "먼저 필터에 맞는 최근 페이지를 보내 드립니다"),
    ],
)
def test_a_welcome_digest_with_votes_says_it_is_to_get_you_started(lang: str, note: str) -> None:
    """The message a chat really gets (with 👍/👎 rows) carries the welcome line, as the
    console and Slack show it."""
    d = replace(digest_of(item(), lang=lang), welcome=True)
    [(body, _markup)] = telegram.render_digest_parts(d)
    assert body.splitlines()[1] == f"<i>{note}</i>"


def test_tldrs_are_folded_under_titles_and_tags() -> None:
    """Ten pages read as ten titles with their tags until a page's quotation is opened."""
    pages = [
        item(make_page(key=f"p{n}", texts=(PageText("en", f"Title {n}", f"TLDR {n}"),)))
        for n in range(10)
    ]
    [message] = render_digest(digest_of(*pages))
    check_message(message)
    entries = message.split("\n\n")[1:]
    assert len(entries) == 10
    for n, entry in enumerate(entries):
        title, tags, folded = entry.split("\n", 2)
        assert f"<b>Title {n}</b>" in title and "blockquote" not in title
        assert "<i>matched: rl</i>" in tags and "blockquote" not in tags
        assert folded.startswith(f"<blockquote expandable>TLDR {n}\n<i>")
        assert folded.endswith("</blockquote>")


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_digest_items(), min_size=1, max_size=40),
    st.sampled_from(["en", "ko"]),
    st.booleans(),
    st.booleans(),
    st.integers(min_value=0, max_value=500),
)
def test_any_digest_renders_to_a_rich_message_within_every_limit(
    items: list[DigestItem], lang: str, instant: bool, welcome: bool, more: int
) -> None:
    """The rich form goes with the first HTML message and covers the others; the Bot API
    (the fake's validators, with its limits) takes it, and it shows every page."""
    numbered = tuple(replace(it, page_id=n) for n, it in enumerate(items, start=1))
    d = Digest(
        lang=lang,
        date=DATE,
        items=numbered,
        instant=instant,
        welcome=welcome,
        more=more,
    )
    parts = render_api.digest_messages(Platform.TELEGRAM, d)
    for part in parts:
        check_message(part.text)
    first, *rest = parts
    assert telegram_payload(first).rich is not None and not telegram_payload(first).rich_covered
    assert all(telegram_payload(p).rich is None and telegram_payload(p).rich_covered for p in rest)
    rich = json.loads(telegram_payload(first).rich)
    check_rich_message(rich)
    chars, blocks, depth = telegram_rich.measure(rich["blocks"])
    assert chars <= telegram_rich.MAX_RICH_TEXT_CHARS and blocks <= telegram_rich.MAX_RICH_BLOCKS
    assert depth <= telegram_rich.MAX_RICH_DEPTH
    pages = [b for b in rich["blocks"] if b["type"] in ("details", "paragraph")]
    assert len(pages) == len(items) + welcome
    actions = [
        button["callback_data"]
        for page in pages
        for block in page.get("blocks", ())
        if block["type"] == "buttons"
        for button in block["buttons"]
    ]
    assert actions == [f"vote:{sign}:{n}" for n in range(1, len(items) + 1) for sign in "+-"]


def test_a_digest_past_the_rich_limits_has_no_rich_form() -> None:
    """Past 500 blocks even at the least detail: the HTML messages carry it alone."""
    many = tuple(
        item(make_page(key=f"p{n}"), matched=()) for n in range(telegram_rich.MAX_RICH_BLOCKS)
    )
    many = tuple(replace(it, page_id=n) for n, it in enumerate(many, start=1))
    parts = render_api.digest_messages(Platform.TELEGRAM, digest_of(*many))
    assert len(parts) > 1 and all(
        telegram_payload(p).rich is None and not telegram_payload(p).rich_covered for p in parts
    )
