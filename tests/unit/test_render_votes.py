"""👍/👎 buttons and page numbers in every renderer, and the "more" line of a cut digest."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from bot.channels.slack import blocks as slack
from bot.channels.telegram import html as telegram
from bot.models import Button, Digest, DigestItem, Page, PageText, Reply
from bot.render import text, votes


def item(i: int, *, tldr: str = "A finding.", with_id: bool = True) -> DigestItem:
    page = Page(
        source="wiki",
        key=f"p/{i}",
        texts=(PageText("en", f"Paper {i}", tldr),),
        tags=("rl",),
        created=dt.date(2026, 11, 1),
    )
    return DigestItem(page=page, matched=("rl",), page_id=1000 + i if with_id else None)


def digest(count: int, *, more: int = 0, lang: str = "en", tldr: str = "A finding.") -> Digest:
    return Digest(
        lang=lang,
        date=dt.date(2026, 12, 3),
        items=tuple(item(i, tldr=tldr) for i in range(count)),
        more=more,
    )


@pytest.mark.parametrize(("count", "tldr"), [(3, "Short."), (40, "Evolution strategies " * 20)])
def test_telegram_every_message_has_the_rows_of_the_pages_it_shows(count: int, tldr: str) -> None:
    parts = telegram.render_digest_parts(digest(count, tldr=tldr))
    seen: list[int] = []
    for html, markup in parts:
        assert telegram.utf16_len(html) <= telegram.MAX_MESSAGE_CHARS
        numbers = [int(n) for n in re.findall(r"(?m)^(\d+)\. <", html)]
        assert markup is not None
        rows = markup["inline_keyboard"]
        assert len(rows) <= telegram.MAX_VOTE_ROWS
        assert [[b["text"] for b in row] for row in rows] == [
            [f"{n} {votes.UP_MARK}", f"{n} {votes.DOWN_MARK}"] for n in numbers
        ]
        assert [row[0]["callback_data"] for row in rows] == [
            votes.action(1000 + n - 1, up=True) for n in numbers
        ]
        seen += numbers
    assert seen == list(range(1, count + 1))
    assert (len(parts) > 1) is (count == 40)


def test_telegram_more_line_ends_the_digest_in_both_languages() -> None:
    [(html, _)] = telegram.render_digest_parts(digest(2, more=7))
    assert html.endswith("…and 7 more: /latest")
    [(html, _)] = telegram.render_digest_parts(digest(2, more=7, lang="ko"))
    assert html.endswith("…외 페이지 7개 (/latest 명령어로 보기)")


def test_pages_without_an_id_get_no_number_and_no_buttons() -> None:
    d = Digest(lang="en", date=dt.date(2026, 12, 3), items=(item(1, with_id=False),))
    [(html, markup)] = telegram.render_digest_parts(d)
    assert markup is None and "1. " not in html
    assert html == telegram.render_digest(d)[0]
    summary, _ = slack.render_digest(d)
    assert not [b for b in summary.blocks if b["type"] == "actions"]
    assert "[+1 👍]" not in text.render_digest(d)


def test_reply_pages_get_rows_and_the_replys_own_buttons_come_last() -> None:
    reply = Reply(
        "en",
        "Newest:",
        items=(item(1), item(2)),
        buttons=((Button("Send", "bc:1"),),),
    )
    [(html, markup)] = telegram.render_reply_parts(reply)
    assert "1. <b>Paper 1</b>" in html and "2. <b>Paper 2</b>" in html
    assert markup is not None
    assert [[b["text"] for b in row] for row in markup["inline_keyboard"]] == [
        ["1 👍", "1 👎"],
        ["2 👍", "2 👎"],
        ["Send"],
    ]


def test_slack_each_page_has_its_buttons_and_the_message_stays_within_limits() -> None:
    summary, replies = slack.render_digest(digest(3, more=2))
    actions = [b for b in summary.blocks if b["type"] == "actions"]
    assert [[e["action_id"] for e in b["elements"]] for b in actions] == [
        [f"trend:vote-{n}-up", f"trend:vote-{n}-down"] for n in (1, 2, 3)
    ]
    assert summary.blocks[-1]["elements"][0]["text"] == "…and 2 more: latest"
    assert replies == ()
    summary, replies = slack.render_digest(digest(30))
    assert all(len(r.blocks) <= slack.MAX_BLOCKS for r in replies)
    ids = [e["action_id"] for r in replies for b in r.blocks if b["type"] == "actions"
           for e in b["elements"]]  # fmt: skip
    assert len(ids) == 60 and len(set(ids)) == 60


def test_console_shows_numbered_pages_with_their_buttons_and_the_more_line() -> None:
    shown = text.render_digest(digest(2, more=3))
    assert "1. Paper 0" in shown and "[+1 👍] [-1 👎]" in shown and "[+2 👍] [-2 👎]" in shown
    assert shown.endswith("…and 3 more: /latest")


def test_slack_latest_of_twenty_pages_keeps_every_page_and_its_buttons() -> None:
    reply = Reply("en", "The newest 20 pages for your filter:", items=tuple(map(item, range(20))))
    message = slack.render_reply(reply)
    assert len(message.blocks) <= slack.MAX_BLOCKS
    actions = [b for b in message.blocks if b["type"] == "actions"]
    assert len(actions) == 20
    assert not any("more" in str(b) for b in message.blocks if b["type"] == "context")
