"""A fan-out under way, for the tests of faults during one: the delivery engine sending a
queued broadcast to a fake Telegram at a cap of messages a second, with many workers, until
the ``async with`` block ends (then stopped as ``run`` stops it)."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.telegram.client import close_bot, make_bot
from bot.channels.telegram.sender import TelegramSender
from bot.delivery.engine import SHUTDOWN_GRACE_SECONDS, Delivery
from bot.models import Platform
from tests.conftest import Settings
from tests.fakes.telegram_api import FakeTelegram

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"


@dataclass
class FanOut:
    tg: FakeTelegram
    delivery: Delivery
    task: asyncio.Task[None]

    def delivered(self) -> int:
        """Messages the platform accepted so far."""
        return len(self.tg.calls("sendMessage", ok=True))

    def per_chat(self) -> collections.Counter[str]:
        """How many messages each chat got."""
        return collections.Counter(c.chat_id for c in self.tg.calls("sendMessage", ok=True))


@asynccontextmanager
async def fan_out(
    engine: AsyncEngine, *, cap: int, concurrency: int = 64, latency: float = 0.05
) -> AsyncIterator[FanOut]:
    """Deliver what ``engine``'s outbox holds, ``cap`` messages a second at most, with
    ``concurrency`` workers, each send answered after ``latency`` seconds."""
    async with FakeTelegram(token=TOKEN) as tg:
        tg.latency = latency
        bot = make_bot(Settings(telegram_bot_token=TOKEN, telegram_api_base_url=tg.base_url))
        delivery = Delivery(
            engine=engine,
            senders={Platform.TELEGRAM: TelegramSender(bot, rate_per_second=cap)},
            concurrency=concurrency,
        )
        stop = asyncio.Event()
        task = asyncio.create_task(delivery.run(stop))
        try:
            yield FanOut(tg=tg, delivery=delivery, task=task)
        finally:
            stop.set()
            await asyncio.wait_for(task, SHUTDOWN_GRACE_SECONDS + 10)
            await close_bot(bot)
