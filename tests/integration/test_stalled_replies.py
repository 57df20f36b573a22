"""A fan-out stalls on its records (the database takes no writes, or is away): no more
deliveries go, since the cap's second of sends already waits for its records, but commands
are still answered at once, within the cap (also in a chat whose delivery holds the chat and
waits for its turn), and a command whose change cannot be stored is answered with the
reason (``tests/integration/test_outage.py`` makes the outage)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.telegram.channel import TelegramChannel
from bot.channels.telegram.client import close_bot, make_bot
from bot.channels.telegram.sender import TelegramSender
from bot.commands import CommandCore, Defaults
from bot.delivery.engine import SHUTDOWN_GRACE_SECONDS, Delivery
from bot.i18n import t
from bot.models import Platform
from tests.conftest import Settings
from tests.fakes.telegram_api import FakeTelegram, TelegramCall
from tests.integration.test_admin import subscribers
from tests.integration.test_outage import Outage, all_recorded, counts, outage  # noqa: F401 (fixture)
from tests.integration.test_replicas import broadcast
from tests.waiting import wait_until

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
CAP = 20
# A reply comes within this long of its command, however stalled the deliveries are.
ANSWERED_WITHIN = 2.5
NEW_USERS = (8_000_001, 8_000_002)


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TOKEN, long_poll_cap=0.2) as server:
        server.latency = 0.05
        server.enforce_limits = True  # the cap, exactly: a reply over it would be a 429
        yield server


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_commands_are_answered_at_once_while_the_fan_out_waits_for_its_records(
    engine: AsyncEngine,
    outage: Outage,  # noqa: F811  (the fixture, imported by name)
    tg: FakeTelegram,
) -> None:
    assert outage.engine is not None
    chats = await subscribers(engine, 200)
    assert await broadcast(engine, "Stalled", tag="rl") == len(chats)
    settings = Settings(
        database_url=outage.url, telegram_bot_token=TOKEN, telegram_api_base_url=tg.base_url
    )
    bot = make_bot(settings)
    sender = TelegramSender(bot, rate_per_second=CAP)
    core = CommandCore(engine=outage.engine, defaults=Defaults())
    channel = TelegramChannel(settings=settings, core=core, bot=bot, pacing=sender.pacing)
    delivery = Delivery(engine=outage.engine, senders={Platform.TELEGRAM: sender}, concurrency=32)
    stop = asyncio.Event()
    await channel.start()
    running = asyncio.create_task(delivery.run(stop))

    def delivered() -> int:
        return len([c for c in tg.calls("sendMessage", ok=True) if c.chat_id in chats])

    async def answer(chat: int, text: str) -> tuple[float, str]:
        seen = len(tg.messages_to(chat))
        tg.message(chat, text)
        asked = time.monotonic()

        def to_chat(call: TelegramCall) -> bool:
            return call.method == "sendMessage" and call.chat_id == chat and call.ok

        calls = await tg.wait_for(to_chat, count=seen + 1, timeout=30)
        return time.monotonic() - asked, str(calls[seen].params["text"])

    try:
        await wait_until(lambda: delivered() >= CAP, seconds=30)
        await outage.begin()
        await asyncio.sleep(2.0)  # the sends under way come back; their records cannot
        stalled = delivered()
        await asyncio.sleep(1.0)
        assert delivered() - stalled <= 1, "the fan-out did not stall"
        assert delivered() < len(chats)
        # The next chats in line: their sends took their chats' slots and wait for a turn
        # that the records hold back.
        sent_to = {c.chat_id for c in tg.calls("sendMessage", ok=True)}
        existing = next(chat for chat in chats if chat not in sent_to)
        started, subscribed, shown = await asyncio.gather(
            answer(NEW_USERS[0], "/start"),
            answer(NEW_USERS[1], "/subscribe nlp"),
            answer(existing, "/settings"),
        )
        assert delivered() - stalled <= 1  # the replies went; the deliveries still wait
        await outage.end()
        await wait_until(lambda: delivered() >= len(chats), seconds=120)
        await wait_until(lambda: delivery.problem is None, seconds=30)
        # The last sends' records settle (a group commit) before the engine is stopped.
        await wait_until(lambda: all_recorded(engine, len(chats)), seconds=30)
    finally:
        stop.set()
        await asyncio.wait_for(running, SHUTDOWN_GRACE_SECONDS + 10)
        await channel.stop()
        await close_bot(bot)
    for waited, _ in (started, subscribed, shown):
        assert waited < ANSWERED_WITHIN, (started, subscribed, shown)
    # A new user's chat cannot be stored: the answer says why, and that nothing changed.
    sqlite = outage.url.startswith("sqlite")
    cannot = t("en", "cmd.store.read_only" if sqlite else "cmd.store.away")
    assert started[1] == cannot and subscribed[1] == cannot
    if sqlite:  # the chat is read as it was: its settings are shown
        assert t("en", "cmd.mode.daily") in shown[1]
    else:  # nothing can be read either
        assert shown[1] == cannot
    assert tg.limit_violations == []
    assert (await counts(engine)).get("sent") == len(chats)
