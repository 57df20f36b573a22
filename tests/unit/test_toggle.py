"""The language toggle's action, and the toggle under a rendered digest."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot import i18n
from bot.channels.slack import blocks as slack
from bot.channels.slack.payload import SlackPayload
from bot.channels.slack.payload import payload as slack_payload
from bot.channels.telegram import rich as telegram_rich
from bot.channels.telegram.payload import TelegramPayload
from bot.channels.telegram.payload import payload as telegram_payload
from bot.models import Digest, DigestItem, Outgoing, Page, PageText, Platform
from bot.render import toggle


def test_action_round_trips_within_telegram_callback_data() -> None:
    data = toggle.action("ko", toggle.MAX_ROW_ID)
    assert len(data.encode()) <= 64
    assert toggle.parse(data) == ("ko", toggle.MAX_ROW_ID)


def test_malformed_actions_are_refused() -> None:
    for data in (
        "lang:fr:1",
        "lang:ko:",
        "lang:ko:0",
        "lang:ko:-1",
        "lang:ko:1x",
        "vote:+:1",
        f"lang:en:{toggle.MAX_ROW_ID + 1}",
        "lang:ko:١٢",
    ):
        assert toggle.parse(data) is None, data


def test_label_is_in_the_language_offered() -> None:
    assert toggle.button("ko", 3).label == "한국어"
    assert toggle.button("en", 3).label == "English"


def _page(*langs: str) -> Page:
    return Page(
        source="wiki",
        key="k",
        texts=tuple(PageText(lang=lang, title="t", tldr="x") for lang in langs),
    )


@pytest.mark.parametrize(
    ("langs", "reader", "offered"),
    [
        ((("en", "ko"),), "en", "ko"),
        ((("en", "ko"),), "ko", "en"),
        ((("en",), ("ko",)), "en", "ko"),  # one page each: still another language
        ((("en",),), "en", None),  # nothing to switch to
        ((("ko",),), "ko", None),
        ((("ko",),), "en", "ko"),  # the page is only in Korean: its language is offered
        ((), "en", None),
    ],
)
def test_the_toggle_names_a_language_the_digest_has(
    langs: tuple[tuple[str, ...], ...], reader: str, offered: str | None
) -> None:
    assert toggle.target([_page(*page) for page in langs], reader) == offered


def test_a_language_the_bot_speaks_but_no_page_has_is_never_offered() -> None:
    i18n.add_language("xx", {"render.toggle": "XX"})
    try:
        pages = [_page("en", "ko")]
        assert toggle.target(pages, "en") == "ko" and toggle.target(pages, "ko") == "en"
        assert toggle.target([_page("en", "xx")], "en") == "xx"
        assert toggle.target([_page("en", "xx")], "xx") == "en"
    finally:
        i18n.remove_language("xx")


def test_the_toggle_back_names_the_language_the_digest_came_from() -> None:
    digest = Digest(
        lang="ko",
        date=dt.date(2026, 1, 5),
        items=(DigestItem(page=_page("en", "ko"), matched=("rl",)),),
    )
    back = toggle.back(digest, 7)
    assert back is not None and toggle.parse(back.action) == ("en", 7)
    alone = Digest(lang="en", date=dt.date(2026, 1, 5), items=(DigestItem(_page("en"), ()),))
    assert toggle.back(alone, 7) is None


@given(rows=st.integers(min_value=0, max_value=20), row_id=st.integers(1, toggle.MAX_ROW_ID))
def test_telegram_toggle_is_a_last_row_of_the_last_message(rows: int, row_id: int) -> None:
    keyboard = [[{"text": f"{i} 👍", "callback_data": f"vote:+:{i}"}] for i in range(rows)]
    parts = [
        Outgoing(text="a"),
        Outgoing(text="b", payload=TelegramPayload(markup={"inline_keyboard": keyboard})),
    ]
    out = toggle.with_toggle(Platform.TELEGRAM, parts, toggle.button("ko", row_id))
    last = telegram_payload(out[-1]).markup
    assert last is not None
    assert last["inline_keyboard"][-1] == [  # type: ignore[index]
        {"text": "한국어", "callback_data": f"lang:ko:{row_id}"}
    ]
    assert len(last["inline_keyboard"]) == rows + 1  # type: ignore[arg-type]
    assert out[0] == parts[0]


@given(blocks=st.integers(min_value=1, max_value=slack.MAX_BLOCKS))
def test_slack_toggle_keeps_within_the_block_limit(blocks: int) -> None:
    message = tuple({"type": "divider"} for _ in range(blocks))
    out = toggle.with_toggle(
        Platform.SLACK,
        [Outgoing(text="x", payload=SlackPayload(blocks=message))],
        toggle.button("en", 9),
    )
    assert len(slack_payload(out[0]).blocks) <= slack.MAX_BLOCKS
    if blocks < slack.MAX_BLOCKS:
        assert slack_payload(out[0]).blocks[-1]["elements"][0]["value"] == "lang:en:9"  # type: ignore[index]


def test_rich_toggle_is_a_buttons_block_within_the_rich_limits() -> None:
    rich = json.dumps({"blocks": [{"type": "paragraph", "text": "x"}]})
    out = toggle.with_toggle(
        Platform.TELEGRAM,
        [Outgoing(text="x", payload=TelegramPayload(rich=rich))],
        toggle.button("ko", 5),
    )
    assert telegram_payload(out[0]).rich is not None
    blocks = json.loads(telegram_payload(out[0]).rich)["blocks"]
    assert blocks[-1] == {
        "type": "buttons",
        "buttons": [{"text": "한국어", "callback_data": "lang:ko:5"}],
    }
    assert telegram_rich.fits(blocks)


_PARAGRAPH = st.fixed_dictionaries(
    {"type": st.just("paragraph"), "text": st.text(min_size=0, max_size=300)}
)


@given(
    blocks=st.lists(_PARAGRAPH, min_size=1, max_size=12),
    filler=st.integers(min_value=0, max_value=telegram_rich.MAX_RICH_BLOCKS),
    extra=st.booleans(),
    row_id=st.integers(1, toggle.MAX_ROW_ID),
)
def test_rich_toggle_is_the_digest_and_one_block_or_nothing(
    blocks: list[dict[str, str]], filler: int, extra: bool, row_id: int
) -> None:
    """Whatever the digest: the toggled rich message parses, keeps within the limits, and
    is the digest's blocks with the toggle's block after them, or the digest unchanged
    when no block fits (at the block limit, or over the characters)."""
    blocks = blocks + [{"type": "footer", "text": "·"}] * filler
    message: dict[str, object] = {"blocks": blocks}
    if extra:
        message = {"blocks": blocks, "version": 1}
    rich = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    button = toggle.button("ko", row_id)
    out = toggle.with_toggle(
        Platform.TELEGRAM, [Outgoing(text="x", payload=TelegramPayload(rich=rich))], button
    )
    toggled = telegram_payload(out[0]).rich
    assert toggled is not None
    parsed = json.loads(toggled)
    block = {"type": "buttons", "buttons": [{"text": button.label, "callback_data": button.action}]}
    if telegram_rich.fits([*blocks, block]):
        assert parsed == {**message, "blocks": [*blocks, block]}
        assert telegram_rich.fits(parsed["blocks"])
    else:
        assert toggled == rich
