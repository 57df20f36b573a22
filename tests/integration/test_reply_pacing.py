"""Replies to commands share the platform's pace and each chat's with deliveries
(``bot.delivery.pacing``), against a Bot API fake that counts its flood limits exactly."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import metrics
from bot.channels.telegram.channel import TelegramChannel
from bot.channels.telegram.client import make_bot
from bot.channels.telegram.sender import TelegramSender
from bot.commands import CommandCore, Defaults
from bot.delivery.engine import Delivery
from bot.i18n import t
from bot.matching.planner import Planner
from bot.models import Page, PageText, Platform
from bot.store import pages as page_store
from tests.conftest import Settings
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram, TelegramCall
from tests.integration.test_slack import TOKEN as SLACK_TOKEN
from tests.integration.test_slack import running as slack_running

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
FIRST_CHAT = 7_000_001


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TOKEN, long_poll_cap=0.2) as server:
        server.enforce_limits = True  # exact: no more than 30 a second, 1 a second a chat
        yield server


@pytest.fixture
async def sl() -> AsyncIterator[FakeSlack]:
    async with FakeSlack(token=SLACK_TOKEN) as server:
        yield server


def _settings(tg: FakeTelegram, database_url: str, **overrides: Any) -> Settings:
    return Settings(
        database_url=database_url,
        telegram_bot_token=TOKEN,
        telegram_api_base_url=tg.base_url,
        **overrides,
    )


def _replies(outcome: str) -> float:
    value = metrics.REGISTRY.get_sample_value(
        "trendbot_replies_total", {"platform": "telegram", "outcome": outcome}
    )
    return value or 0.0


@pytest.mark.timeout(120)
async def test_a_flood_of_500_commands_is_answered_in_full_without_a_429(
    tg: FakeTelegram, engine: AsyncEngine, database_url: str
) -> None:
    settings = _settings(tg, database_url)  # the default cap: 30 messages a second
    core = CommandCore(engine=engine, defaults=Defaults())
    channel = TelegramChannel(settings=settings, core=core, bot=make_bot(settings))
    chats = range(FIRST_CHAT, FIRST_CHAT + 500)
    sent_before = _replies("sent")
    await channel.start()
    try:
        for n, chat in enumerate(chats):  # 500 commands in 10 s
            tg.message(chat, "/help")
            if n % 25 == 24:
                await asyncio.sleep(0.5)

        def answered(call: TelegramCall) -> bool:
            return call.method == "sendMessage" and call.ok and call.chat_id in chats

        await tg.wait_for(answered, count=500, timeout=60)
    finally:
        await channel.stop()
    assert tg.limit_violations == []
    assert {call.chat_id for call in tg.calls("sendMessage", ok=True)} == set(chats)
    assert _replies("sent") - sent_before == len(tg.calls("sendMessage", ok=True))


async def _seed_pages(engine: AsyncEngine) -> None:
    today = dt.datetime.now(dt.UTC).date()
    pages = [
        Page(
            source="wiki",
            key=f"papers/p{i}",
            texts=(PageText("en", f"Paper {i}", "tl;dr"),),
            tags=("rl",),
            created=today - dt.timedelta(days=i),
        )
        for i in range(3)
    ]
    async with engine.begin() as conn:
        source = await page_store.source(conn, name="wiki", kind="directory")
        await page_store.record_pages(
            conn, source=source, found=pages, present_keys=None, now=page_store.utcnow()
        )


@pytest.mark.timeout(60)
async def test_a_digest_asked_for_follows_its_reply_within_the_chat_limit(
    tg: FakeTelegram, engine: AsyncEngine, database_url: str
) -> None:
    await _seed_pages(engine)
    settings = _settings(tg, database_url)
    bot = make_bot(settings)
    sender = TelegramSender(bot, rate_per_second=settings.telegram_rate_per_second)
    planner = Planner(engine=engine)
    core = CommandCore(engine=engine, defaults=Defaults(), digests=planner)
    channel = TelegramChannel(settings=settings, core=core, bot=bot, pacing=sender.pacing)
    delivery = Delivery(engine=engine, senders={Platform.TELEGRAM: sender}, concurrency=4)
    stop = asyncio.Event()
    await channel.start()
    running = asyncio.create_task(delivery.run(stop))
    chat = FIRST_CHAT
    try:
        tg.message(chat, "/subscribe rl")
        await tg.wait_for(lambda c: c.method == "sendMessage" and c.chat_id == chat, timeout=10)
        seen = len(tg.messages_to(chat))
        tg.message(chat, "/digest")
        calls = await tg.wait_for(
            lambda c: c.method == "sendMessage" and c.chat_id == chat and c.ok,
            count=seen + 2,  # the reply, then the digest's first message
            timeout=20,
        )
    finally:
        stop.set()
        await running
        await channel.stop()
    reply, digest = calls[seen], calls[seen + 1]
    assert "Paper" not in reply.params["text"] and "Paper" in digest.params["text"]
    assert digest.at - reply.at >= 1.0  # the chat's limit, whoever sent to it
    assert tg.limit_violations == []


async def test_a_slack_reply_refused_with_429_is_sent_again(
    sl: FakeSlack, engine: AsyncEngine
) -> None:
    sent_before = metrics.REGISTRY.get_sample_value(
        "trendbot_replies_total", {"platform": "slack", "outcome": "retried"}
    )
    sl.fail_next("response_url", status=429)  # no Retry-After: the client waits a second
    async with slack_running(sl, engine, ack_budget=0.0) as bot:
        answer = await bot.command("settings")  # answered through the response_url
    assert answer.via == "response_url"
    assert t("en", "cmd.mode.daily") in answer.text
    assert [call.status for call in sl.calls("response_url")] == [429, 200]
    retried = metrics.REGISTRY.get_sample_value(
        "trendbot_replies_total", {"platform": "slack", "outcome": "retried"}
    )
    assert (retried or 0.0) - (sent_before or 0.0) == 1
