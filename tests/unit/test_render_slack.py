from __future__ import annotations

import dataclasses
import datetime as dt
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.channels.slack.blocks import (
    EXPANDED_PAGES,
    MAX_BLOCKS,
    MAX_CONTAINER_CHILDREN,
    MAX_CONTAINER_TITLE,
    MAX_FALLBACK_TEXT,
    MAX_HEADER_TEXT,
    MAX_SECTION_TEXT,
    REPLY_BLOCKS,
    THREAD_THRESHOLD,
    SlackMessage,
    block_count,
    render_digest,
    render_digest_containers,
    render_reply,
)
from bot.models import Button, Digest, DigestItem, Page, PageText, Reply
from bot.render import votes
from tests.fakes.slack_api import block_problems
from tests.strategies import LONG_TEXT, TEXT, digest_items

DATE = dt.date(2026, 12, 3)
LINK = re.compile(r"<https?://[^<>|\s]+\|[^<>|]*>")


def u16(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def texts_of(block: dict[str, Any]) -> list[str]:
    if block["type"] == "section":
        return [block["text"]["text"]]
    if block["type"] == "context":
        return [e["text"] for e in block["elements"]]
    return []


def check_mrkdwn(s: str) -> None:
    """Only our own ``<url|title>`` links; every ``&`` starts an escape."""
    rest = LINK.sub("", s)
    assert "<" not in rest and ">" not in rest, s
    assert not re.search(r"&(?!(amp|lt|gt);)", s), s


def check_message(m: SlackMessage) -> None:
    assert m.text.strip()
    assert u16(m.text) <= MAX_FALLBACK_TEXT
    check_mrkdwn(m.text)
    assert 0 < len(m.blocks) <= MAX_BLOCKS
    action_ids: list[str] = []
    for block in m.blocks:
        assert block["type"] in {"header", "section", "context", "actions"}
        if block["type"] == "header":
            assert block["text"]["type"] == "plain_text"
            assert 0 < len(block["text"]["text"]) <= MAX_HEADER_TEXT
        if block["type"] == "section":
            assert block["text"]["type"] == "mrkdwn"
            assert 0 < u16(block["text"]["text"]) <= MAX_SECTION_TEXT
        if block["type"] == "context":
            assert 0 < len(block["elements"]) <= 10
        if block["type"] == "actions":
            assert 0 < len(block["elements"]) <= 25
            for e in block["elements"]:
                assert 0 < len(e["text"]["text"]) <= 75
                assert len(e["action_id"]) <= 255 and len(e["value"]) <= 2000
                action_ids.append(e["action_id"])
        for s in texts_of(block):
            assert s.strip()
            assert u16(s) <= MAX_SECTION_TEXT
            check_mrkdwn(s)
    assert len(action_ids) == len(set(action_ids))


def make_page(
    key: str = "papers/2026/2608.27351-es",
    *,
    texts: tuple[PageText, ...] = (PageText("en", "Evolution Strategies", "ES explores more."),),
    tags: tuple[str, ...] = ("rl", "reasoning"),
    url: str | None = "https://wiki.example/es",
    source: str = "wiki",
) -> Page:
    return Page(
        source=source,
        key=key,
        texts=texts,
        tags=tags,
        url=url,
        arxiv="2608.27351",
        created=dt.date(2026, 8, 29),
    )


def item(
    page: Page | None = None, matched: tuple[str, ...] = ("rl",), updated: bool = False
) -> DigestItem:
    return DigestItem(page=page or make_page(), matched=matched, updated=updated)


def titled(n: int) -> list[DigestItem]:
    return [
        item(make_page(f"k{i}", texts=(PageText("en", f"Title {i}", "TL;DR"),))) for i in range(n)
    ]


# --- digests -----------------------------------------------------------------------------


def test_short_digest_is_one_message() -> None:
    d = Digest(lang="en", date=DATE, items=(item(updated=True),))
    message, replies = render_digest(d)
    check_message(message)
    assert replies == ()
    assert message.blocks == (
        {
            "type": "header",
            "text": {
                "type": "plain_text",
                "text": "📚 AI trends · 3 Dec 2026 · 1 page",
                "emoji": True,
            },
        },
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": "*<https://wiki.example/es|Evolution Strategies>*  🔄 updated\n"
                "#rl #reasoning · matched: rl\n"
                "ES explores more.",
            },
        },
        {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": "29 Aug 2026 · arXiv 2608.27351"}],
        },
    )
    assert message.text == "📚 AI trends · 3 Dec 2026 · 1 page\n• Evolution Strategies"


def test_korean_digest_with_english_only_page() -> None:
    page = make_page(source="https://arxiv.org/rss")
    message, _ = render_digest(Digest(lang="ko", date=DATE, items=(item(page),)))
    assert message.blocks[0]["text"]["text"] == "📚 AI 트렌드 · 2026년 12월 3일 · 페이지 1개"
    assert (
        "*<https://wiki.example/es|Evolution Strategies>*  (영어)"
        in message.blocks[1]["text"]["text"]
    )
    assert "일치한 태그: rl" in message.blocks[1]["text"]["text"]
    assert (
        message.blocks[2]["elements"][0]["text"] == "2026년 8월 29일 · arXiv 2608.27351 · arxiv.org"
    )


@pytest.mark.parametrize("count", [1, THREAD_THRESHOLD])
def test_up_to_threshold_no_thread(count: int) -> None:
    message, replies = render_digest(Digest(lang="en", date=DATE, items=tuple(titled(count))))
    check_message(message)
    assert replies == ()
    assert len(message.blocks) == 1 + 2 * count


@pytest.mark.parametrize("count", [THREAD_THRESHOLD + 1, 10, 11, 47])
def test_long_digest_goes_to_a_thread(count: int) -> None:
    message, replies = render_digest(Digest(lang="en", date=DATE, items=tuple(titled(count))))
    check_message(message)
    assert [b["type"] for b in message.blocks] == ["header", "section", "context"]
    top = message.blocks[1]["text"]["text"]
    assert top.splitlines()[0] == "Top 3:"
    assert "Title 0" in top and "Title 2" in top and "Title 3" not in top
    assert message.blocks[2]["elements"][0]["text"] == f"All {count} pages are in the thread."
    assert replies
    shown = []
    for reply in replies:
        check_message(reply)
        assert len(reply.blocks) <= REPLY_BLOCKS
        shown += re.findall(
            r"\|(Title \d+)>",
            " ".join(b["text"]["text"] for b in reply.blocks if b["type"] == "section"),
        )
    assert shown == [f"Title {i}" for i in range(count)]


def test_page_content_is_escaped() -> None:
    page = make_page(
        texts=(PageText("en", "a|b <c> & *d*", "<!channel> & <https://evil|x>"),),
        tags=("<tag>",),
        url="https://wiki.example/?a=1&b=<2>|x",
    )
    message, _ = render_digest(Digest(lang="en", date=DATE, items=(item(page, ("<tag>",)),)))
    check_message(message)
    section = message.blocks[1]["text"]["text"]
    assert section.startswith(
        "*<https://wiki.example/?a=1&amp;b=%3C2%3E%7Cx|a\u2223b &lt;c&gt; &amp; *d*>*"
    )
    assert "&lt;!channel&gt; &amp; &lt;https://evil|x&gt;" in section
    assert "#&lt;tag&gt;" in section


@pytest.mark.parametrize("url", ["javascript:alert(1)", "/p", None, "mailto:a@b.c"])
def test_no_link_without_http_url(url: str | None) -> None:
    message, _ = render_digest(Digest(lang="en", date=DATE, items=(item(make_page(url=url)),)))
    assert message.blocks[1]["text"]["text"].startswith("*Evolution Strategies*\n")


def test_instant_header() -> None:
    message, _ = render_digest(Digest(lang="ko", date=DATE, items=(item(),), instant=True))
    assert message.blocks[0]["text"]["text"] == "🆕 AI 트렌드 새 소식"


# --- replies -----------------------------------------------------------------------------


def test_reply_text_and_buttons() -> None:
    r = Reply(
        lang="en",
        text="Preview:\n\nHello <everyone> & all\n\nReaches 3 chats.",
        buttons=(
            (Button("Send", "bc:send:1"), Button("Cancel", "bc:cancel:1")),
            (Button("More", "m"),),
        ),
    )
    m = render_reply(r)
    check_message(m)
    assert m.blocks == (
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": "Preview:\n\nHello &lt;everyone&gt; &amp; all\n\nReaches 3 chats.",
            },
        },
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": "Send", "emoji": True},
                    "action_id": "trend:0",
                    "value": "bc:send:1",
                },
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": "Cancel", "emoji": True},
                    "action_id": "trend:1",
                    "value": "bc:cancel:1",
                },
            ],
        },
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": "More", "emoji": True},
                    "action_id": "trend:2",
                    "value": "m",
                },
            ],
        },
    )
    assert m.text == "Preview:\n\nHello &lt;everyone&gt; &amp; all\n\nReaches 3 chats."


def test_replyLONG_TEXT_spans_sections() -> None:
    text = "\n\n".join("word " * 400 for _ in range(5))  # 5 paragraphs of 2000 characters
    m = render_reply(Reply(lang="en", text=text))
    check_message(m)
    assert len(m.blocks) == 5
    assert "".join(text.split()) == "".join("".join(b["text"]["text"] for b in m.blocks).split())


def test_reply_with_items() -> None:
    m = render_reply(Reply(lang="en", text="Latest 2:", items=tuple(titled(2))))
    check_message(m)
    assert [b["type"] for b in m.blocks] == ["section", "section", "context", "section", "context"]


def test_reply_too_many_blocks_notes_what_is_left_out() -> None:
    r = Reply(
        lang="en",
        text="Latest:",
        items=tuple(titled(30)),
        buttons=((Button("Send", "s"),),),
    )
    m = render_reply(r)
    check_message(m)
    # text (1) + 23 pages (2 blocks each) + note (1) + buttons (1): a 24th page would not fit
    assert len(m.blocks) == 49
    assert m.blocks[-1]["type"] == "actions"
    assert m.blocks[-2] == {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": "…and 7 more"}],
    }


@pytest.mark.parametrize(
    "r",
    [
        Reply(lang="en", text=""),
        Reply(lang="en", text="", buttons=((Button("OK", "ok"),),)),
        Reply(lang="en", text="", items=tuple(titled(1))),
    ],
)
def test_reply_fallback_text_never_empty(r: Reply) -> None:
    assert render_reply(r).text.strip()


def test_button_limits() -> None:
    m = render_reply(
        Reply(lang="en", text="x", buttons=(tuple(Button("L" * 100, f"a{i}") for i in range(30)),))
    )
    check_message(m)
    actions = [b for b in m.blocks if b["type"] == "actions"]
    assert [len(a["elements"]) for a in actions] == [25, 5]
    assert len(actions[0]["elements"][0]["text"]["text"]) == 75


# --- properties --------------------------------------------------------------------------


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(digest_items(), min_size=1, max_size=30), st.sampled_from(["en", "ko"]), st.booleans()
)
def test_any_digest_renders_within_limits(
    items: list[DigestItem], lang: str, instant: bool
) -> None:
    message, replies = render_digest(
        Digest(lang=lang, date=DATE, items=tuple(items), instant=instant)
    )
    check_message(message)
    for reply in replies:
        check_message(reply)
    sections = sum(b["type"] == "section" for m in (message, *replies) for b in m.blocks)
    assert sections == (len(items) if len(items) <= THREAD_THRESHOLD else len(items) + 1)


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(TEXT, LONG_TEXT, LONG_TEXT.map(lambda s: s * 20)),
    st.lists(digest_items(), max_size=40),
    st.lists(st.lists(st.builds(Button, TEXT, st.text(max_size=64)), max_size=30), max_size=4),
)
def test_any_reply_renders_within_limits(
    text: str, items: list[DigestItem], rows: list[list[Button]]
) -> None:
    m = render_reply(
        Reply(lang="en", text=text, items=tuple(items), buttons=tuple(map(tuple, rows)))
    )
    if text.strip() or items or any(rows):
        check_message(m)
    assert m.text.strip()


# --- collapsible containers ------------------------------------------------------------


def check_containers(m: SlackMessage, pages: list[tuple[int, DigestItem]]) -> None:
    """``m`` is taken by Slack (the fake's validator), as are its fallback blocks, and it has
    one container per page of ``pages`` (numbered), each followed by the page's feedback."""
    assert block_problems(list(m.blocks)) == []
    assert block_problems(list(m.fallback_blocks)) == []
    assert 0 < block_count(m.blocks) <= MAX_BLOCKS
    containers = [b for b in m.blocks if b["type"] == "container"]
    assert len(containers) == len(pages)
    for container, (number, digest_item) in zip(containers, pages, strict=True):
        assert container["is_collapsible"] is True
        assert container["default_collapsed"] is (number > EXPANDED_PAGES)
        assert 0 < len(container["child_blocks"]) <= MAX_CONTAINER_CHILDREN
        assert 0 < len(container["title"]["text"]) <= MAX_CONTAINER_TITLE
        for child in container["child_blocks"]:
            for s in texts_of(child):
                check_mrkdwn(s)
        after = m.blocks[m.blocks.index(container) + 1 :]
        if digest_item.page_id is None:
            assert not after or after[0]["type"] != "context_actions"
            continue
        [feedback] = after[0]["elements"]
        assert feedback["type"] == "feedback_buttons"
        assert feedback["action_id"] == f"trend:vote-{number}"
        assert feedback["positive_button"]["value"] == votes.action(digest_item.page_id, up=True)
        assert feedback["negative_button"]["value"] == votes.action(digest_item.page_id, up=False)


def voted(items: list[DigestItem]) -> list[DigestItem]:
    return [dataclasses.replace(it, page_id=100 + i) for i, it in enumerate(items)]


def test_short_digest_as_containers_with_todays_sections_to_fall_back_to() -> None:
    d = Digest(lang="en", date=DATE, items=tuple(voted([item(updated=True), *titled(4)])))
    message, replies = render_digest_containers(d)
    assert replies == ()
    plain, _ = render_digest(d)
    assert message.fallback_blocks == plain.blocks and message.text == plain.text
    assert message.blocks[0] == plain.blocks[0]  # the header
    first = message.blocks[1]
    assert first == {
        "type": "container",
        "title": {"type": "plain_text", "text": "1. Evolution Strategies", "emoji": True},
        "is_collapsible": True,
        "default_collapsed": False,
        "child_blocks": [
            {
                "type": "section",
                "text": {
                    "type": "mrkdwn",
                    "text": "*<https://wiki.example/es|Evolution Strategies>*  🔄 updated\n"
                    "#rl #reasoning · matched: rl\n"
                    "ES explores more.",
                },
            },
            {
                "type": "context",
                "elements": [{"type": "mrkdwn", "text": "29 Aug 2026 · arXiv 2608.27351"}],
            },
        ],
    }
    assert message.blocks[2] == {
        "type": "context_actions",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": "trend:vote-1",
                "positive_button": {
                    "text": {"type": "plain_text", "text": "👍", "emoji": True},
                    "value": "vote:+:100",
                },
                "negative_button": {
                    "text": {"type": "plain_text", "text": "👎", "emoji": True},
                    "value": "vote:-:100",
                },
            }
        ],
    }
    check_containers(message, list(enumerate(d.items, start=1)))


def test_the_fake_refuses_what_slack_refuses_in_containers_and_feedback_buttons() -> None:
    ok = {
        "type": "container",
        "title": {"type": "plain_text", "text": "T"},
        "is_collapsible": True,
        "default_collapsed": True,
        "child_blocks": [{"type": "divider"}],
    }
    assert block_problems([ok]) == []
    assert block_problems([ok], unsupported=frozenset({"container"}))
    bad = [
        {**ok, "child_blocks": [{"type": "divider"}] * 11},
        {**ok, "child_blocks": []},
        {**ok, "child_blocks": [ok]},  # no container in a container
        {**ok, "child_blocks": [{"type": "context_actions", "elements": []}]},
        {**ok, "title": {"type": "plain_text", "text": "T" * 151}},
        {**ok, "title": {"type": "mrkdwn", "text": "T"}},
        {**ok, "is_collapsible": False},  # default_collapsed needs is_collapsible
        {"type": "context_actions", "elements": []},
        {"type": "no_such_block"},
    ]
    feedback = {
        "type": "feedback_buttons",
        "action_id": "a",
        "positive_button": {"text": {"type": "plain_text", "text": "👍"}, "value": "v"},
        "negative_button": {"text": {"type": "plain_text", "text": "👎"}, "value": "w"},
    }
    assert block_problems([{"type": "context_actions", "elements": [feedback]}]) == []
    long_text = {"type": "plain_text", "text": "x" * 76}
    for broken in (
        [feedback] * 6,
        [{**feedback, "negative_button": None}],
        [{**feedback, "positive_button": {**feedback["positive_button"], "text": long_text}}],
        [{**feedback, "positive_button": {"text": {"type": "plain_text", "text": "x"}}}],
        [{"type": "button", "text": {"type": "plain_text", "text": "x"}, "action_id": "b"}],
    ):
        bad.append({"type": "context_actions", "elements": broken})
    for block in bad:
        assert block_problems([block]), block
    assert block_problems([ok] * 25) == []  # 25 containers and a child each: 50 blocks
    assert block_problems([ok] * 26)


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(digest_items(), min_size=1, max_size=30),
    st.sampled_from(["en", "ko"]),
    st.booleans(),
    st.integers(min_value=0, max_value=40),
)
def test_any_digest_renders_as_containers_within_every_limit(
    items: list[DigestItem], lang: str, instant: bool, more: int
) -> None:
    d = Digest(lang=lang, date=DATE, items=tuple(voted(items)), instant=instant, more=more)
    message, replies = render_digest_containers(d)
    plain, plain_replies = render_digest(d)
    numbered = list(enumerate(d.items, start=1))
    if len(items) <= THREAD_THRESHOLD:
        check_containers(message, numbered)
        assert replies == ()
    else:
        assert message == plain  # the summary has no pages of its own
        assert len(replies) == len(plain_replies)
        start = 0
        for reply, plain_reply in zip(replies, plain_replies, strict=True):
            assert reply.fallback_blocks == plain_reply.blocks and reply.text == plain_reply.text
            count = sum(b["type"] == "container" for b in reply.blocks)
            check_containers(reply, numbered[start : start + count])
            start += count
        assert start == len(items)
    for m in (message, *replies):
        check_message(SlackMessage(m.text, m.fallback_blocks or m.blocks))
