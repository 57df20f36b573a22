"""Digests and replies as Discord's Components V2 messages: within its limits, escaped."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

from hypothesis import given, settings
from hypothesis import strategies as st

import bot.channels.discord  # noqa: F401  (registers the renderer)
from bot import render
from bot.channels.discord import components
from bot.channels.discord.payload import payload
from bot.channels.discord.settings import DISCORD
from bot.models import Button, Filter, Page, PageText, Reply
from bot.render import toggle
from bot.rules.digest import build_digest

UNESCAPE = re.compile(r"\\(.)", re.DOTALL)


def page(i: int, title: str, tldr: str) -> Page:
    return Page(
        source="wiki",
        key=f"papers/2026/p{i}",
        texts=(PageText("en", title or "t", tldr), PageText("ko", f"논문 {i}", "요약")),
        tags=("rl", "reasoning"),
        url=f"https://wiki.example.org/p({i})",
        created=dt.date(2026, 8, 1),
    )


@settings(max_examples=60, deadline=None)
@given(
    count=st.integers(min_value=1, max_value=40),
    title=st.text(max_size=300),
    tldr=st.text(max_size=2000),
    more=st.integers(min_value=0, max_value=100),
)
def test_every_digest_fits_discords_limits_with_its_toggle(
    count: int, title: str, tldr: str, more: int
) -> None:
    pages = [page(i, title, tldr) for i in range(count)]
    digest = build_digest(
        lang="en",
        filter=Filter(any_of=frozenset({"rl"})),
        candidates=[(p, False) for p in pages],
        today=dt.date(2026, 8, 30),
    )
    assert digest is not None
    digest = dataclasses.replace(digest, more=more)
    parts = toggle.with_toggle(
        DISCORD, render.digest_messages(DISCORD, digest), toggle.button("ko", 123)
    )
    for part in parts:
        shown = payload(part).components
        assert shown
        assert components.count(shown) <= components.MAX_COMPONENTS
        assert components.text_chars(shown) <= components.MAX_TEXT_CHARS
    last = payload(parts[-1]).components
    assert last[-1]["components"][0]["custom_id"] == "lang:ko:123"
    containers = [c for p in parts for c in payload(p).components if c["type"] == 17]
    assert len(containers) == count


@given(st.text(max_size=500))
def test_escaping_shows_the_text_as_written(s: str) -> None:
    escaped = components.escape(s)
    assert UNESCAPE.sub(r"\1", escaped) == s
    assert not re.search(r"(?<!\\)[*_~`|<\[\]@]", escaped)


@given(st.text(max_size=6000))
def test_a_broadcast_is_plain_pieces_within_2000_characters(body: str) -> None:
    for piece in components.plain_pieces(body):
        assert len(piece.encode("utf-16-le", "surrogatepass")) // 2 <= components.MAX_CONTENT_CHARS


def test_a_reply_keeps_its_buttons_in_rows_of_five_and_fits() -> None:
    buttons = tuple(
        tuple(Button(f"tag{i}-{j}", f"tog:t{i}-{j}") for j in range(3)) for i in range(20)
    )
    messages = render.reply_messages(
        DISCORD, Reply("en", "Pick tags.\n\n" + "x " * 3000, buttons=buttons)
    )
    for message in messages:
        shown = payload(message).components
        assert components.count(shown) <= components.MAX_COMPONENTS
        assert components.text_chars(shown) <= components.MAX_TEXT_CHARS
        for row in (c for c in shown if c["type"] == 1):
            assert len(row["components"]) <= components.MAX_ROW_BUTTONS


def test_a_title_with_mentions_and_links_stays_text() -> None:
    pages = [page(1, "@everyone <@123> [click](https://evil.example)", "**bold** # x")]
    digest = build_digest(
        lang="en",
        filter=Filter(any_of=frozenset({"rl"})),
        candidates=[(p, False) for p in pages],
        today=dt.date(2026, 8, 30),
    )
    assert digest is not None
    (message,) = render.digest_messages(DISCORD, digest)
    text = payload(message).components[1]["components"][0]["content"]
    assert "\\@everyone \\<\\@123> \\[click\\](https://evil.example)" in text
    assert "(https://wiki.example.org/p%281%29)" in text
    assert "\\*\\*bold\\*\\*" in text
