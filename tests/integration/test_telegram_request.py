"""python-telegram-bot over aiohttp (``AiohttpRequest``) against the local Bot API server:
the requests it makes, its timeouts and failures as the delivery engine sees them."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions
from telegram.error import NetworkError, TimedOut

from bot.channels.telegram.client import close_bot, make_bot, translate_error
from bot.channels.telegram.payload import TelegramPayload
from bot.channels.telegram.request import AiohttpRequest
from bot.channels.telegram.sender import TelegramSender, post_message, send_outgoing
from bot.delivery.pacing import PACE_WINDOW_MARGIN_SECONDS, Pace
from bot.errors import DeliveryError, TransientError
from bot.models import Outgoing
from tests.conftest import Settings
from tests.fakes.telegram_api import FakeTelegram
from tests.ports import free_port
from tests.waiting import wait_until

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
PRIVATE = 1001
OTHER = 1002
FORUM = -1005550001
OTHER_FORUM = -1005550002


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TOKEN) as server:
        yield server


@pytest.fixture
async def bot(tg: FakeTelegram) -> AsyncIterator[Bot]:
    made = make_bot(Settings(telegram_bot_token=TOKEN, telegram_api_base_url=tg.base_url))
    try:
        yield made
    finally:
        await close_bot(made)


async def _error_of(bot: Bot) -> DeliveryError:
    with pytest.raises(DeliveryError) as caught:
        await TelegramSender(bot, rate_per_second=30).send(
            str(PRIVATE), Outgoing(text="hi"), thread=None
        )
    return caught.value


async def test_make_bot_sends_through_aiohttp(tg: FakeTelegram, bot: Bot) -> None:
    assert isinstance(bot.request, AiohttpRequest)
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("Más", callback_data="more:1")]])
    sent = await bot.send_message(
        PRIVATE, "<b>Hello</b> & «bye»", parse_mode="HTML", reply_markup=markup
    )
    assert sent.text == "Hello & «bye»" and sent.entities[0].type == "bold"
    edited = await bot.edit_message_text("Changed", chat_id=PRIVATE, message_id=sent.message_id)
    assert isinstance(edited, type(sent)) and edited.text == "Changed"
    (call, edit) = tg.sent
    assert call.params["reply_markup"] == markup.to_dict()
    assert call.params["chat_id"] == PRIVATE and edit.params["message_id"] == sent.message_id


async def test_get_updates_long_polls_over_aiohttp_past_its_read_timeout() -> None:
    """python-telegram-bot adds the long-poll timeout to the read timeout of the getUpdates
    transport: a poll held longer than ``read_timeout`` is not a timeout."""
    made = make_bot(Settings(telegram_bot_token=TOKEN))
    # PTB keeps (getUpdates, everything else) here and offers no public accessor.
    assert isinstance(made._request[0], AiohttpRequest)
    async with (
        FakeTelegram(token=TOKEN, long_poll_cap=5.0) as tg,
        Bot(
            TOKEN,
            base_url=tg.base_url,
            request=AiohttpRequest(),
            get_updates_request=AiohttpRequest(connection_pool_size=1, read_timeout=0.2),
        ) as bot,
    ):

        async def later() -> None:
            await tg.wait_for_poll()
            await asyncio.sleep(0.5)  # the poll held past its read timeout of 0.2 s
            tg.message(PRIVATE, "/help")

        sender = asyncio.create_task(later())
        updates = await bot.get_updates(timeout=3)
        await sender
    assert [u.message.text for u in updates if u.message] == ["/help"]


async def test_sender_posts_the_parameters_send_message_posts(tg: FakeTelegram, bot: Bot) -> None:
    sender = TelegramSender(bot, rate_per_second=30)
    markup = {"inline_keyboard": [[{"text": "Stop", "callback_data": "stop"}]]}
    for message in (
        Outgoing(text="<b>Digest</b> &amp; more"),
        Outgoing(text="<plain> & text", plain=True, payload=TelegramPayload(markup=markup)),
    ):
        ref = await sender.send(str(PRIVATE), message, thread=None)
        via_bot = await send_outgoing(bot, chat_id=OTHER, message=message)
        ours, theirs = tg.sent[-2:]
        assert ref == str(ours.result["message_id"])
        assert {**ours.params, "chat_id": OTHER} == theirs.params
        assert ours.result["text"] == via_bot.text
    # A forum topic of each of two supergroups, the same topic id in both.
    topic = tg.create_topic(FORUM, "RL")
    assert tg.create_topic(OTHER_FORUM, "RL") == topic
    await post_message(bot, chat_id=FORUM, message=message, thread_id=topic)
    await send_outgoing(bot, chat_id=OTHER_FORUM, message=message, thread_id=topic)
    ours, theirs = tg.sent[-2:]
    assert ours.ok and ours.params["message_thread_id"] == topic
    assert {**ours.params, "chat_id": OTHER_FORUM} == theirs.params
    await post_message(bot, chat_id=PRIVATE, message=message, paid=True)
    await bot.send_message(
        OTHER,
        message.text,
        link_preview_options=LinkPreviewOptions(is_disabled=True),
        reply_markup=InlineKeyboardMarkup.de_json(markup, None),
        allow_paid_broadcast=True,
    )
    ours, theirs = tg.sent[-2:]
    assert ours.params["allow_paid_broadcast"] is True
    assert {**ours.params, "chat_id": OTHER} == theirs.params


@pytest.mark.parametrize("stall", [0.0, 0.05, 0.3])
async def test_a_paced_send_counts_from_when_its_body_is_written(
    tg: FakeTelegram, bot: Bot, stall: float
) -> None:
    """aiohttp keeps the headers back to send them with the body, which a task of its own
    writes; before Python 3.12 that task first runs on a later turn of the event loop. The
    loop busy meanwhile (a stall of the pace's fake clock) is time the send waited before it
    left, and the next send keeps its window from when it left."""
    now = [100.0]

    async def sleep(seconds: float) -> None:
        now[0] += seconds
        await asyncio.sleep(0)

    def busy() -> None:
        now[0] += stall

    pace = Pace(1, clock=lambda: now[0], sleep=sleep)
    await bot.get_me()  # a connection to reuse: connecting would let the loop turn earlier
    first = await pace.acquire()
    asyncio.get_running_loop().call_soon(busy)  # the next turn of the loop is a busy one
    await bot.send_message(PRIVATE, "hi")
    second = await pace.acquire()
    left = first + (stall if sys.version_info < (3, 12) else 0.0)
    assert second == pytest.approx(left + 1.0 + PACE_WINDOW_MARGIN_SECONDS)


async def test_uploads_go_as_multipart() -> None:
    """Files (not used by the bot today) go as multipart/form-data, as with HTTPXRequest."""
    seen: dict[str, Any] = {}

    async def echo(request: web.Request) -> web.Response:
        if request.match_info["method"] == "getMe":
            me = {"id": 123456789, "is_bot": True, "first_name": "B", "username": "B"}
            return web.json_response({"ok": True, "result": me})
        seen["type"] = request.content_type
        form = await request.post()
        seen["fields"] = {
            k: (v.file.read() if isinstance(v, web.FileField) else v) for k, v in form.items()
        }
        message = {"message_id": 7, "date": 0, "chat": {"id": PRIVATE, "type": "private"}}
        return web.json_response({"ok": True, "result": message})

    app = web.Application()
    app.router.add_post("/bot{token}/{method}", echo)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with Bot(
            TOKEN, base_url=f"http://127.0.0.1:{port}/bot", request=AiohttpRequest()
        ) as bot:
            await bot.send_document(PRIVATE, document=b"%PDF-1", filename="a.pdf", caption="c")
    finally:
        await runner.cleanup()
    assert seen["type"] == "multipart/form-data"
    fields = seen["fields"]
    assert fields["caption"] == "c" and json.loads(fields["chat_id"]) == PRIVATE
    assert b"%PDF-1" in next(v for v in fields.values() if isinstance(v, bytes))


async def test_read_timeout_is_ambiguous(tg: FakeTelegram) -> None:
    async with Bot(TOKEN, base_url=tg.base_url, request=AiohttpRequest(read_timeout=0.1)) as bot:
        tg.latency = 0.5
        error = await _error_of(bot)
    assert isinstance(error, TransientError) and error.ambiguous
    assert error.reason.startswith("timeout")


async def test_no_free_connection_is_a_timeout_before_sending(tg: FakeTelegram) -> None:
    request = AiohttpRequest(connection_pool_size=1, pool_timeout=0.1, connect_timeout=0.1)
    async with Bot(TOKEN, base_url=tg.base_url, request=request) as bot:
        tg.latency = 0.6
        busy = asyncio.create_task(bot.send_message(PRIVATE, "holds the one connection"))
        await wait_until(lambda: tg.request_count["sendMessage"] == 1, what="the first send")
        with pytest.raises(TimedOut) as caught:
            await bot.send_message(OTHER, "waits for it")
        await busy
    error = translate_error(caught.value, token=TOKEN)
    assert isinstance(error, TransientError) and not error.ambiguous
    assert [c.chat_id for c in tg.calls("sendMessage")] == [PRIVATE]  # the second never went


async def test_refused_connection_is_a_network_error() -> None:
    port = free_port()  # a port nothing listens on
    bot = Bot(TOKEN, base_url=f"http://127.0.0.1:{port}/bot", request=AiohttpRequest())
    try:
        with pytest.raises(NetworkError) as caught:
            await bot.send_message(PRIVATE, "hi")
        error = await _error_of(bot)
    finally:
        await close_bot(bot)
    assert not isinstance(caught.value, TimedOut)
    assert isinstance(error, TransientError) and not error.ambiguous
    assert TOKEN not in error.reason


async def test_sends_before_initialize_and_none_after_shutdown(tg: FakeTelegram) -> None:
    request = AiohttpRequest()
    bot = Bot(TOKEN, base_url=tg.base_url, request=request)
    sender = TelegramSender(bot, rate_per_second=30)
    assert await sender.send(str(PRIVATE), Outgoing(text="before"), thread=None) == "1"
    await close_bot(bot)
    await close_bot(bot)  # idempotent
    error = await _error_of(bot)  # the message stays queued, nothing is sent
    assert isinstance(error, TransientError) and not error.ambiguous
    assert len(tg.calls("sendMessage")) == 1
    await request.initialize()
    try:
        assert await sender.send(str(PRIVATE), Outgoing(text="again"), thread=None) == "2"
    finally:
        await request.shutdown()
