"""Hypothesis strategies shared by the tests: hostile text, pages and digest items.

Text is built from pieces each renderer must escape or keep whole: markup characters of
both platforms (HTML for Telegram, mrkdwn for Slack), entities, emoji of several code
points, Korean, newlines.
"""

from __future__ import annotations

from hypothesis import strategies as st

from bot.models import DigestItem, Page, PageText

NASTY = st.sampled_from(
    [
        "&",
        "<",
        ">",
        '"',
        "'",
        "|",
        "*",
        "<b>",
        "</a>",
        "<!here>",
        "&amp;",
        "🦜",
        "👩\u200d💻",
        "강화",
        "\n",
    ]
)
TEXT = st.lists(st.one_of(st.text(max_size=20), NASTY), max_size=30).map("".join)
# 10,000 characters of a short random piece: longer than any message limit.
LONG_TEXT = st.text(min_size=1, max_size=40).map(lambda s: (s * (10_000 // len(s) + 1))[:10_000])
URLS = st.one_of(
    st.none(),
    st.just('https://x.example/?a=<1>&b="2"'),
    st.just("https://x.example/?a=<1>&b=|2|"),
    TEXT,
    TEXT.map(lambda s: "https://x.example/" + s),
)


@st.composite
def pages(draw: st.DrawFn, *, titles: st.SearchStrategy[str] = TEXT | LONG_TEXT) -> Page:
    """A page in one or two languages with hostile text everywhere a page has text."""
    langs = draw(st.lists(st.sampled_from(["en", "ko", "xx"]), min_size=1, max_size=2, unique=True))
    tldr = draw(st.one_of(TEXT, st.just("&<>" * 3400), LONG_TEXT))
    title = draw(titles)
    return Page(
        source=draw(st.sampled_from(["wiki", "https://arxiv.org/rss", "<&>", "https://<&>"])),
        key=draw(st.text(max_size=20)),
        texts=tuple(PageText(lang, title, tldr) for lang in langs),
        tags=tuple(draw(st.lists(st.one_of(st.text(max_size=70), NASTY), max_size=60))),
        url=draw(URLS),
        arxiv=draw(st.one_of(st.none(), TEXT)),
        created=draw(st.one_of(st.none(), st.dates())),
    )


@st.composite
def digest_items(
    draw: st.DrawFn, *, titles: st.SearchStrategy[str] = TEXT | LONG_TEXT
) -> DigestItem:
    """A digest item of :func:`pages`, matched on some of its tags."""
    page = draw(pages(titles=titles))
    matched = tuple(draw(st.lists(st.sampled_from(page.tags), max_size=5))) if page.tags else ()
    return DigestItem(page=page, matched=matched, updated=draw(st.booleans()))


# Webhook bodies that are not a Telegram update, each in its own way.
MALFORMED_UPDATES = [
    b"",
    b"\xff\xfe\x00",
    b"null",
    b"[]",
    b'"update"',
    b'{"update_id": "7"}',
    b'{"update_id": 7.5}',
    b'{"update_id": true}',
    b'{"update_id": 7, "message": "hi"}',
    b'{"update_id": 7, "message": {"chat": 5}}',
    b'{"update_id": 7, "callback_query": [1]}',
    b'{"update_id": 7, "message": {"message_id": 1, "date": "x", "chat": {"id": 1}}}',
    b'{"update_id": 1' + b"0" * 5000 + b"}",
    b"[" * 100_000 + b"]" * 100_000,  # nested too deeply for the JSON parser
    b'{"update_id": 7, "message": ' + b'{"a": ' * 50_000 + b"1" + b"}" * 50_001,
]
