"""Digests as one rich message (sendRichMessage) against the fake Bot API, and the HTML
digest when the server refuses it: per chat, for every chat, across messages."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot import render
from bot.channels.telegram.client import RICH_REFUSALS_FOR_ALL, close_bot, make_bot
from bot.channels.telegram.payload import payload as telegram_payload
from bot.channels.telegram.sender import TelegramSender
from bot.errors import ChatGone
from bot.models import Digest, DigestItem, Outgoing, Page, PageText, Platform
from tests.conftest import Settings
from tests.fakes.telegram_api import FakeTelegram, _ApiError, check_rich_message

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
CHATS = (1001, 1002, 1003, 1004, 1005)


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TOKEN) as server:
        yield server


async def _sender(tg: FakeTelegram, rich: str = "auto") -> TelegramSender:
    settings = Settings(telegram_bot_token=TOKEN, telegram_api_base_url=tg.base_url)
    return TelegramSender(make_bot(settings), rate_per_second=30, rich=rich)  # type: ignore[arg-type]


@pytest.fixture
async def sender(tg: FakeTelegram) -> AsyncIterator[TelegramSender]:
    s = await _sender(tg)
    try:
        yield s
    finally:
        await close_bot(s._bot)


def digest(pages: int = 3, *, tldr: str = "A short TL;DR.") -> list[Outgoing]:
    items = tuple(
        DigestItem(
            page=Page(
                source="wiki",
                key=f"p{n}",
                texts=(PageText("en", f"Title {n}", f"{tldr} {n}"),),
                tags=("rl",),
                url=f"https://wiki.example/p{n}",
                created=dt.date(2026, 8, 29),
            ),
            matched=("rl",),
            page_id=100 + n,
        )
        for n in range(1, pages + 1)
    )
    d = Digest(lang="en", date=dt.date(2026, 12, 3), items=items)
    return render.digest_messages(Platform.TELEGRAM, d)


async def deliver(sender: TelegramSender, chat: int, parts: list[Outgoing]) -> list[str | None]:
    """The parts in order, as the delivery engine sends them."""
    return [await sender.send(str(chat), part, thread=None) for part in parts]


def methods(tg: FakeTelegram, chat: int) -> list[tuple[str, int]]:
    return [(c.method, c.status) for c in tg.sent if c.chat_id == chat]


async def test_a_digest_goes_as_one_rich_message_with_a_details_block_per_page(
    tg: FakeTelegram, sender: TelegramSender
) -> None:
    parts = digest(3)
    refs = await deliver(sender, CHATS[0], parts)

    assert refs[0] == "1" and refs[1:] == [None] * (len(parts) - 1)
    [call] = tg.calls("sendRichMessage")
    assert call.ok and not tg.calls("sendMessage")
    rich = call.params["rich_message"]
    check_rich_message(rich)  # the fake's validators, once more on what was sent
    heading, *pages = rich["blocks"]
    assert heading == {"type": "heading", "text": "📚 AI trends · 3 Dec 2026 · 3 pages", "size": 2}
    assert [p["type"] for p in pages] == ["details"] * 3
    first = pages[0]
    assert first["summary"] == ["1. ", {"type": "bold", "text": "Title 1"}]
    inner = {b["type"]: b for b in first["blocks"]}
    assert first["blocks"][0] == {
        "type": "paragraph",
        "text": ["#rl", " · ", {"type": "italic", "text": "matched: rl"}],
    }
    assert {"type": "paragraph", "text": "A short TL;DR. 1"} in first["blocks"]
    link = {"type": "url", "text": "Open the page ↗", "url": "https://wiki.example/p1"}
    assert {"type": "paragraph", "text": link} in first["blocks"]
    assert inner["buttons"]["buttons"] == [
        {"text": "1 👍", "callback_data": "vote:+:101"},
        {"text": "1 👎", "callback_data": "vote:-:101"},
    ]
    [message] = tg.messages_to(CHATS[0])
    assert message["rich_message"]["blocks"] == rich["blocks"] and "text" not in message


async def test_a_server_without_the_method_answers_404_and_every_chat_gets_html(
    tg: FakeTelegram, sender: TelegramSender
) -> None:
    tg.bot_api_version = (10, 0)
    parts = digest(2)
    assert await deliver(sender, CHATS[0], parts) == ["1"]
    assert methods(tg, CHATS[0]) == [("sendRichMessage", 404), ("sendMessage", 200)]
    html = tg.messages_to(CHATS[0])[0]
    assert "Title 1" in html["text"]
    assert any(e["type"] == "expandable_blockquote" for e in html["entities"])

    # the next digests, to this chat and any other, go as HTML at once
    await deliver(sender, CHATS[0], parts)
    await deliver(sender, CHATS[1], parts)
    assert len(tg.calls("sendRichMessage")) == 1
    assert methods(tg, CHATS[1]) == [("sendMessage", 200)]


async def test_a_chat_that_refuses_gets_html_from_then_on_and_the_others_rich(
    tg: FakeTelegram, sender: TelegramSender
) -> None:
    tg.rich_refused_chats.add(CHATS[0])
    parts = digest(2)
    await deliver(sender, CHATS[0], parts)
    await deliver(sender, CHATS[1], parts)
    await deliver(sender, CHATS[0], parts)

    assert methods(tg, CHATS[0]) == [
        ("sendRichMessage", 400),
        ("sendMessage", 200),
        ("sendMessage", 200),  # remembered across messages
    ]
    assert methods(tg, CHATS[1]) == [("sendRichMessage", 200)]
    assert sender.rich_for(str(CHATS[1])) and not sender.rich_for(str(CHATS[0]))


async def test_a_long_digest_refused_goes_as_all_its_html_messages(
    tg: FakeTelegram, sender: TelegramSender
) -> None:
    parts = digest(20, tldr="word " * 80)
    assert len(parts) > 1 and telegram_payload(parts[0]).rich is not None
    assert all(telegram_payload(p).rich_covered for p in parts[1:])
    tg.rich_refused_chats.add(CHATS[0])
    refs = await deliver(sender, CHATS[0], parts)
    assert None not in refs
    assert [m for m, _ in methods(tg, CHATS[0])] == ["sendRichMessage"] + ["sendMessage"] * len(
        parts
    )
    # the same digest where it is taken: one message
    refs = await deliver(sender, CHATS[1], parts)
    assert refs[1:] == [None] * (len(parts) - 1)
    assert methods(tg, CHATS[1]) == [("sendRichMessage", 200)]


async def test_a_server_without_button_rows_refuses_every_chat_and_all_get_html(
    tg: FakeTelegram, sender: TelegramSender
) -> None:
    tg.bot_api_version = (10, 2)  # sendRichMessage and blocks, but no button rows
    parts = digest(1)
    for chat in CHATS:
        await deliver(sender, chat, parts)
    refused = [c for c in tg.calls("sendRichMessage") if c.status == 400]
    assert len(refused) == RICH_REFUSALS_FOR_ALL == len(tg.calls("sendRichMessage"))
    assert "can't parse rich message" in (refused[0].description or "")
    assert all(methods(tg, chat)[-1] == ("sendMessage", 200) for chat in CHATS)
    assert not sender.rich_for(str(CHATS[-1]))


async def test_rich_on_tries_every_digest_and_remembers_nothing(tg: FakeTelegram) -> None:
    sender = await _sender(tg, rich="on")
    try:
        tg.rich_refused_chats.add(CHATS[0])
        parts = digest(1)
        await deliver(sender, CHATS[0], parts)
        await deliver(sender, CHATS[0], parts)
    finally:
        await close_bot(sender._bot)
    assert methods(tg, CHATS[0]) == [
        ("sendRichMessage", 400),
        ("sendMessage", 200),
        ("sendRichMessage", 400),
        ("sendMessage", 200),
    ]


async def test_rich_off_sends_html_only(tg: FakeTelegram) -> None:
    sender = await _sender(tg, rich="off")
    try:
        parts = digest(20, tldr="word " * 80)
        await deliver(sender, CHATS[0], parts)
    finally:
        await close_bot(sender._bot)
    assert methods(tg, CHATS[0]) == [("sendMessage", 200)] * len(parts)


async def test_a_gone_chat_is_gone_not_refused(tg: FakeTelegram, sender: TelegramSender) -> None:
    tg.missing_chats.add(CHATS[0])
    with pytest.raises(ChatGone):
        await sender.send(str(CHATS[0]), digest(1)[0], thread=None)
    assert methods(tg, CHATS[0]) == [("sendRichMessage", 400)]
    assert sender.rich_for(str(CHATS[0]))


def _blocks(*blocks: Any) -> dict[str, Any]:
    return {"blocks": list(blocks)}


def _nested(levels: int) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "paragraph", "text": "x"}
    for _ in range(levels - 1):
        block = {"type": "details", "summary": "s", "blocks": [block]}
    return block


@pytest.mark.parametrize(
    "rich",
    [
        {"html": "<p>x</p>", "blocks": [{"type": "paragraph", "text": "x"}]},
        {},
        _blocks(),
        _blocks({"type": "heading", "text": "x", "size": 7}),
        _blocks({"type": "paragraph"}),
        _blocks({"type": "details", "summary": "s"}),
        _blocks({"type": "paragraph", "text": {"type": "blink", "text": "x"}}),
        _blocks({"type": "paragraph", "text": {"type": "url", "text": "x", "url": "ftp://x"}}),
        _blocks({"type": "buttons", "buttons": []}),
        _blocks({"type": "buttons", "buttons": [{"text": "b", "callback_data": "d"}] * 9}),
        _blocks({"type": "buttons", "buttons": [{"text": "b", "callback_data": "d" * 65}]}),
        _blocks({"type": "buttons", "buttons": [{"text": "b"}]}),
        _blocks(
            {
                "type": "buttons",
                "buttons": [{"text": "b", "url": "https://x", "callback_data": "d"}],
            }
        ),
        _blocks(
            {
                "type": "buttons",
                "buttons": [{"text": {"type": "bold", "text": "b"}, "callback_data": "d"}],
            }
        ),
        _blocks(
            {"type": "buttons", "buttons": [{"text": "b", "url": "https://x", "style": "link"}]}
        ),
        _blocks(*[{"type": "paragraph", "text": "x"}] * 501),
        _blocks({"type": "paragraph", "text": "x" * 32769}),
        _blocks(_nested(17)),
    ],
)
def test_the_fake_refuses_what_the_bot_api_refuses(rich: dict[str, Any]) -> None:
    with pytest.raises(_ApiError) as refused:
        check_rich_message(rich)
    assert refused.value.status == 400


def test_the_fake_takes_what_the_bot_api_takes() -> None:
    check_rich_message({"html": "<h1>x</h1>"})
    check_rich_message(_blocks(_nested(16)))
    check_rich_message(_blocks({"type": "paragraph", "text": "x" * 32768}))
    check_rich_message(
        _blocks(
            {"type": "buttons", "buttons": [{"text": "b", "callback_data": "d", "style": "link"}]}
        )
    )
    with pytest.raises(_ApiError):  # a 10.1 server: no explicit blocks
        check_rich_message(_blocks({"type": "paragraph", "text": "x"}), version=(10, 1))
