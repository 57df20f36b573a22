"""A platform that answers after the timeout: every send it had no answer for may have
arrived, so a message is re-sent once at most (after a pause, waiting longer), then held;
each chat gets at most two copies, the rows end in a state that says so, and the operators'
alert and ``/healthz`` say the platform is slow. A sender whose re-sends are never
duplicates (an idempotency key, as Discord's ``nonce``) retries freely, with the same key."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import Bot

from bot.channels.telegram.request import AiohttpRequest
from bot.channels.telegram.sender import TelegramSender
from bot.delivery.engine import SHUTDOWN_GRACE_SECONDS, Delivery
from bot.delivery.failures import MAX_UNKNOWN_SENDS
from bot.delivery.sender import Attempt, BaseSender
from bot.errors import OutcomeUnknown
from bot.i18n import t
from bot.models import ChatSettings, Outgoing, Platform
from bot.ops import web
from bot.ops.alert_service import AlertService
from bot.store.schema import outbox
from tests.conftest import Settings
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_admin import subscribers
from tests.integration.test_outage import counts
from tests.integration.test_replicas import broadcast
from tests.waiting import wait_until

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
CHATS = 20
# The fake answers after LATENCY; the bot waits READ for a first send's answer.
LATENCY = 1.0
READ = 0.3
PAUSE = 0.3  # before the one re-send


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TOKEN) as fake:
        fake.latency = LATENCY
        yield fake


async def _run(
    engine: AsyncEngine, sender: BaseSender | TelegramSender, *, done: Any, backoff: float = 30.0
) -> Delivery:
    delivery = Delivery(
        engine=engine,
        senders={Platform.TELEGRAM: sender},
        unknown_pause=PAUSE,
        backoff_base=backoff,
    )
    stop = asyncio.Event()
    task = asyncio.create_task(delivery.run(stop))
    try:
        try:
            await wait_until(done, seconds=60)
        except AssertionError as failed:
            raise AssertionError(f"not done: {await counts(engine)}") from failed
    finally:
        stop.set()
        await asyncio.wait_for(task, SHUTDOWN_GRACE_SECONDS + 10)
    return delivery


def _copies(tg: FakeTelegram) -> collections.Counter[int]:
    return collections.Counter(int(c.chat_id) for c in tg.calls("sendMessage", ok=True))


async def _unknown_sends(engine: AsyncEngine) -> set[int]:
    async with engine.connect() as conn:
        return set((await conn.execute(select(outbox.c.unknown_sends))).scalars())


async def test_a_platform_that_never_answers_in_time_gets_two_copies_then_the_chat_is_held(
    engine: AsyncEngine, tg: FakeTelegram
) -> None:
    chats = await subscribers(engine, CHATS)
    await broadcast(engine, "Slow", tag="rl")
    bot = Bot(TOKEN, base_url=tg.base_url, request=AiohttpRequest(read_timeout=READ))
    # The re-send waits longer, but not long enough for this platform either.
    sender = TelegramSender(bot, rate_per_second=30, resend_timeout=LATENCY / 2)

    async def all_held() -> bool:
        return (await counts(engine)).get("held", 0) == CHATS

    try:
        delivery = await _run(engine, sender, done=all_held)
        hooks = web.WebHooks(slow=delivery.slow)
        runner, port = await web.start(
            web.make_app(engine=engine, hooks=hooks), host="127.0.0.1", port=0
        )
        try:
            async with (
                aiohttp.ClientSession() as session,
                session.get(f"http://127.0.0.1:{port}/healthz") as response,
            ):
                status, body = response.status, await response.json()
        finally:
            await runner.cleanup()
    finally:
        await bot.request.shutdown()
    # Every copy the fake took is in by now (each answered after LATENCY).
    await wait_until(lambda: sum(_copies(tg).values()) >= 2 * CHATS, seconds=10)
    await asyncio.sleep(LATENCY)
    assert _copies(tg) == {chat: MAX_UNKNOWN_SENDS for chat in chats}  # two, not eight
    assert await counts(engine) == {"held": CHATS}  # not "failed": they may have arrived
    assert await _unknown_sends(engine) == {2}
    assert delivery.held == CHATS and delivery.failed == 0
    assert status == 200, body  # the bot works; the platform is slow
    assert body["platforms"]["telegram"]["status"] == "slow", body
    assert "no answer in time" in body["platforms"]["telegram"]["slow"]

    settings = Settings(
        telegram_bot_token=TOKEN, telegram_api_base_url=tg.base_url, telegram_admin_ids="10000"
    )
    changes = await AlertService(engine=engine, settings=settings).check()
    slow = [c for c in changes if c.key == "slow:telegram"]
    assert slow and slow[0].started
    assert slow[0].params == {"platform": "Telegram", "unknown": CHATS, "held": CHATS}
    text = t("en", slow[0].message, **slow[0].params)
    assert "Telegram is slow" in text and "held" in text
    async with engine.connect() as conn:
        alerts = (
            await conn.execute(select(outbox.c.payload).where(outbox.c.kind == "alert"))
        ).scalars()
        assert any("Telegram is slow" in payload for payload in alerts)


async def test_a_platform_slow_for_a_while_gets_the_re_send_answered_and_the_row_sent(
    engine: AsyncEngine, tg: FakeTelegram
) -> None:
    chats = await subscribers(engine, CHATS)
    await broadcast(engine, "Slow", tag="rl")
    bot = Bot(TOKEN, base_url=tg.base_url, request=AiohttpRequest(read_timeout=READ))
    # The re-send waits long enough for the slow answer.
    sender = TelegramSender(bot, rate_per_second=30, resend_timeout=LATENCY * 4)

    async def all_sent() -> bool:
        return (await counts(engine)).get("sent", 0) == CHATS

    try:
        delivery = await _run(engine, sender, done=all_sent)
    finally:
        await bot.request.shutdown()
    await asyncio.sleep(LATENCY)
    copies = _copies(tg)
    assert set(copies) == set(chats) and max(copies.values()) <= MAX_UNKNOWN_SENDS
    assert await counts(engine) == {"sent": CHATS}
    # The record says the first send had no answer: the chat may have it twice.
    assert await _unknown_sends(engine) == {1}
    assert delivery.held == 0 and "telegram" in delivery.slow()


class _Idempotent(BaseSender):
    """A platform that takes an idempotency key (Discord's nonce): it drops a re-send of a
    key it already has. The first ``unanswered`` sends of each message have no answer
    (they arrive, keyed)."""

    platform = Platform.TELEGRAM

    def __init__(self, unanswered: int) -> None:
        self._unanswered = unanswered
        self.keys: collections.defaultdict[str, list[Attempt]] = collections.defaultdict(list)
        self.arrived: dict[str, str] = {}  # key -> chat: one message per key, as the platform

    @property
    def rate_per_second(self) -> float | None:
        return None

    def interval(self, chat: ChatSettings) -> float:
        return 0.0

    async def send(
        self, chat_id: str, message: Outgoing, *, thread: str | None, attempt: Attempt | None = None
    ) -> str | None:
        assert attempt is not None
        self.keys[chat_id].append(attempt)
        self.arrived[attempt.key] = chat_id
        if len(self.keys[chat_id]) <= self._unanswered:
            raise OutcomeUnknown("timeout: no answer")
        return None


async def test_a_keyed_re_send_carries_the_same_key_and_the_bound_holds_as_elsewhere(
    engine: AsyncEngine,
) -> None:
    """The re-send carries the first send's key, whatever the process or the try, so a
    platform that keeps keys drops it; a key is kept a few minutes only (Discord's nonce),
    so the bound is the same as everywhere: one re-send, then held (the build before
    retried such a message for the backoff's hour)."""
    chats = await subscribers(engine, 3)
    await broadcast(engine, "Keyed", tag="rl")
    sender = _Idempotent(unanswered=MAX_UNKNOWN_SENDS + 1)

    async def all_held() -> bool:
        return (await counts(engine)).get("held", 0) == len(chats)

    delivery = await _run(engine, sender, done=all_held, backoff=0.01)
    assert delivery.held == len(chats)
    for chat in chats:
        tries = sender.keys[str(chat)]
        assert len(tries) == MAX_UNKNOWN_SENDS  # the bound: no send after the hold
        assert len({a.key for a in tries}) == 1  # one key, whatever the process or the try
        assert [a.resend for a in tries] == [False, True]
    assert sorted(int(c) for c in sender.arrived.values()) == chats  # one message a key
