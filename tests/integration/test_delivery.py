"""Delivery through python-telegram-bot, unchanged, against the local Bot API server:
limits, retries and failures, each as its own test, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import event, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.telegram.client import close_bot, make_bot
from bot.channels.telegram.sender import TelegramSender
from bot.delivery.engine import Delivery
from bot.delivery.sender import Attempt, BaseSender
from bot.models import ChatSettings, ChatState, Mode, Outgoing, Platform
from bot.store import chats as chat_store
from bot.store import outbox
from bot.store.schema import chats as chats_table
from bot.store.schema import outbox as outbox_table
from tests.conftest import Settings
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_planner import World, started
from tests.waiting import wait_until

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TOKEN) as server:
        server.enforce_limits = True
        yield server


@pytest.fixture
async def sender(tg: FakeTelegram) -> AsyncIterator[TelegramSender]:
    settings = Settings(telegram_bot_token=TOKEN, telegram_api_base_url=tg.base_url)
    bot = make_bot(settings)
    try:
        yield TelegramSender(bot, rate_per_second=30)
    finally:
        await close_bot(bot)


def delivery(engine: AsyncEngine, sender: TelegramSender) -> Delivery:
    return Delivery(
        engine=engine, senders={Platform.TELEGRAM: sender}, concurrency=8, backoff_base=0.05
    )


async def statuses(engine: AsyncEngine) -> list[tuple[str, str | None]]:
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(outbox_table.c.status, outbox_table.c.last_error).order_by(outbox_table.c.id)
        )
        return [(status, error) for status, error in rows]


async def drain_until_sent(engine: AsyncEngine, sender: TelegramSender) -> None:
    """Drains the outbox until its first message is sent: the retries of a failed send are
    due after a short back-off."""

    async def sent() -> bool:
        await delivery(engine, sender).drain()
        return (await statuses(engine))[0][0] == "sent"

    await wait_until(sent, interval=0.1, what="the first message sent")


async def one_digest(engine: AsyncEngine, root: Path, *chat_ids: str) -> World:
    world = await started(engine, root)
    for chat_id in chat_ids:
        await world.chat(chat_id, "rl")
    await world.publish("papers/2026/a-finding", tags="[rl, reasoning]", tldr="A & <b>B</b>.")
    assert await world.plan() == len(chat_ids)
    return world


async def test_digest_is_sent_once_as_html(
    engine: AsyncEngine, tmp_path: Path, tg: FakeTelegram, sender: TelegramSender
) -> None:
    await one_digest(engine, tmp_path, "1001")
    await delivery(engine, sender).drain()
    (message,) = tg.calls("sendMessage")
    assert message.params["parse_mode"] == "HTML"
    assert "a-finding" in message.params["text"]
    assert "A &amp; &lt;b&gt;B&lt;/b&gt;." in message.params["text"]
    assert await statuses(engine) == [("sent", None)]
    await delivery(engine, sender).drain()
    assert len(tg.calls("sendMessage")) == 1


@pytest.mark.parametrize(
    ("stored", "reason"),
    [
        ("{not json", "not JSON"),
        ('{"pages": [[1]]}', "malformed digest payload"),
        ('{"v": 9}', "unknown payload version"),
    ],
)
async def test_a_row_that_cannot_be_read_fails_alone(
    engine: AsyncEngine,
    tmp_path: Path,
    tg: FakeTelegram,
    sender: TelegramSender,
    stored: str,
    reason: str,
) -> None:
    """A payload edited by hand, or written by a version that does not exist, fails its
    own row with the reason; the claim and the other chats' messages go on."""
    await one_digest(engine, tmp_path, "1001", "1002")
    async with engine.begin() as conn:
        first = (await conn.execute(select(outbox_table.c.id).order_by(outbox_table.c.id))).first()
        assert first is not None
        await conn.execute(
            update(outbox_table).where(outbox_table.c.id == first[0]).values(payload=stored)
        )
    await delivery(engine, sender).drain()
    (bad, good) = await statuses(engine)
    assert bad[0] == "failed" and bad[1] is not None and reason in bad[1]
    assert good == ("sent", None)
    assert len(tg.calls("sendMessage", ok=True)) == 1


async def test_rate_limited_chat_waits_and_is_not_dropped(
    engine: AsyncEngine, tmp_path: Path, tg: FakeTelegram, sender: TelegramSender
) -> None:
    await one_digest(engine, tmp_path, "1001", "1002")
    tg.fail_next("sendMessage", 429, retry_after=1, chat_id=1001)
    started_at = time.monotonic()
    await delivery(engine, sender).drain()
    ok = tg.calls("sendMessage", ok=True)
    assert sorted(c.chat_id for c in ok) == [1001, 1002]
    retried = next(c for c in ok if c.chat_id == 1001)
    assert retried.at - started_at >= 1.0  # waited the given retry_after
    other = next(c for c in ok if c.chat_id == 1002)
    assert other.at < retried.at  # one chat's wait held up no one else
    assert [s for s, _ in await statuses(engine)] == ["sent", "sent"]


async def test_server_errors_back_off_then_succeed(
    engine: AsyncEngine, tmp_path: Path, tg: FakeTelegram, sender: TelegramSender
) -> None:
    await one_digest(engine, tmp_path, "1001")
    tg.fail_next("sendMessage", 500, times=2)
    await delivery(engine, sender).drain()  # the retries are later: drain leaves them
    await drain_until_sent(engine, sender)
    assert len(tg.calls("sendMessage", ok=True)) == 1
    assert await statuses(engine) == [("sent", None)]


async def test_retries_end_in_failed_with_the_reason_and_digest_now_retries(
    engine: AsyncEngine, tmp_path: Path, tg: FakeTelegram, sender: TelegramSender
) -> None:
    await one_digest(engine, tmp_path, "1001")
    tg.fail_next("sendMessage", 502, times=8)

    async def failed() -> bool:
        if (await statuses(engine))[0][0] == "failed":
            return True
        await delivery(engine, sender).drain()
        return False

    # Backoff from 0.05 s: the 8 attempts take about 7 s.
    await wait_until(failed, seconds=40, interval=0.1, what="the message failed")
    ((status, error),) = await statuses(engine)
    assert status == "failed" and error is not None and "8 attempts" in error
    assert len(tg.calls("sendMessage")) == 8
    assert TOKEN not in error
    async with engine.begin() as conn:
        assert await outbox.retry_failed(conn) == 1
    await delivery(engine, sender).drain()
    assert [s for s, _ in await statuses(engine)] == ["sent"]


async def test_blocked_chat_becomes_inactive_and_gets_nothing_more(
    engine: AsyncEngine, tmp_path: Path, tg: FakeTelegram, sender: TelegramSender
) -> None:
    world = await one_digest(engine, tmp_path, "1001")
    tg.blocked_chats.add(1001)
    await delivery(engine, sender).drain()
    async with engine.connect() as conn:
        record = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id="1001")
    assert record is not None and record.chat.state == ChatState.INACTIVE
    assert [s for s, _ in await statuses(engine)] == ["failed"]
    await world.publish("papers/2026/another", tags="[rl]")
    assert await world.plan() == 0
    await delivery(engine, sender).drain()
    assert tg.calls("sendMessage", ok=True) == []


async def test_chat_not_found_is_permanent(
    engine: AsyncEngine, tmp_path: Path, tg: FakeTelegram, sender: TelegramSender
) -> None:
    await one_digest(engine, tmp_path, "1001")
    tg.missing_chats.add(1001)
    await delivery(engine, sender).drain()
    async with engine.connect() as conn:
        record = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id="1001")
    assert record is not None and record.chat.state == ChatState.INACTIVE
    assert len(tg.calls("sendMessage")) == 1  # no retries


async def test_migrated_group_gets_the_message_at_its_new_id(
    engine: AsyncEngine, tmp_path: Path, tg: FakeTelegram, sender: TelegramSender
) -> None:
    await one_digest(engine, tmp_path, "-1001")
    tg.migrated_chats[-1001] = -1009999
    await delivery(engine, sender).drain()
    assert [c.chat_id for c in tg.calls("sendMessage", ok=True)] == [-1009999]
    async with engine.connect() as conn:
        record = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id="-1009999")
    assert record is not None and record.chat.state == ChatState.ACTIVE


async def test_dropped_connection_is_retried(
    engine: AsyncEngine, tmp_path: Path, tg: FakeTelegram, sender: TelegramSender
) -> None:
    await one_digest(engine, tmp_path, "1001")
    tg.drop_next("sendMessage", 1)
    await drain_until_sent(engine, sender)
    assert len(tg.calls("sendMessage", ok=True)) == 1


async def test_per_chat_and_global_limits_hold(
    engine: AsyncEngine, tmp_path: Path, tg: FakeTelegram
) -> None:
    world = await started(engine, tmp_path)
    tg.global_rate = 10
    await world.chat("1001", "*", mode=Mode.INSTANT)  # three messages to one private chat
    for i in range(12):
        await world.chat(str(2000 + i), "rl")
    for name in ("a", "b", "c"):
        await world.publish(f"p/{name}", tags="[rl]")
    await world.plan()
    settings = Settings(telegram_bot_token=TOKEN, telegram_api_base_url=tg.base_url)
    bot = make_bot(settings)
    try:
        paced = TelegramSender(bot, rate_per_second=10)
        await Delivery(engine=engine, senders={Platform.TELEGRAM: paced}, concurrency=8).drain()
    finally:
        await close_bot(bot)
    ok = tg.calls("sendMessage", ok=True)
    assert len(ok) == 3 + 12
    assert tg.limit_violations == []
    to_private = sorted(c.at for c in ok if c.chat_id == 1001)
    assert all(b - a >= 1.0 for a, b in itertools.pairwise(to_private))
    every = sorted(c.at for c in ok)
    assert every[-1] - every[0] >= (len(every) - 1) / 10 * 0.95  # the overall cap


async def test_group_chat_gets_at_most_20_a_minute(
    engine: AsyncEngine, tmp_path: Path, tg: FakeTelegram, sender: TelegramSender
) -> None:
    world = await started(engine, tmp_path)
    record = await world.chat("-100123", "*", mode=Mode.INSTANT)
    async with engine.begin() as conn:
        await conn.execute(
            update(chats_table).where(chats_table.c.id == record.pk).values(kind="group")
        )
    for name in ("a", "b"):
        await world.publish(f"p/{name}", tags="[rl]")
    await world.plan()
    await delivery(engine, sender).drain()
    times = sorted(c.at for c in tg.calls("sendMessage", ok=True))
    assert len(times) == 2
    assert times[1] - times[0] >= 60 / 20


class SleepingSender(BaseSender):
    """Sends nothing: waits as a request would, records the chat, succeeds."""

    platform = Platform.TELEGRAM
    rate_per_second = None

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.chats: list[str] = []

    def interval(self, chat: ChatSettings) -> float:
        return 1.0

    async def send(
        self, chat_id: str, message: Outgoing, *, thread: str | None, attempt: Attempt | None = None
    ) -> str | None:
        await asyncio.sleep(self.latency)
        self.chats.append(chat_id)
        return None


class BuggySender(SleepingSender):
    """Raises an error no send should raise (a bug) for one chat; sends to the others."""

    def __init__(self, broken: str) -> None:
        super().__init__(latency=0.01)
        self.broken = broken
        self.tries = 0

    async def send(
        self, chat_id: str, message: Outgoing, *, thread: str | None, attempt: Attempt | None = None
    ) -> str | None:
        if chat_id == self.broken:
            self.tries += 1
            raise KeyError("a bug in the sender")
        return await super().send(chat_id, message, thread=thread)


async def test_a_bug_in_a_send_fails_that_message_after_its_retries_and_is_logged(
    engine: AsyncEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A send that raises what no platform error is (a bug) counts as a failed attempt of
    that message alone: retried with back-off, then failed with the reason, logged with
    its traceback; the other chats get theirs."""
    await one_digest(engine, tmp_path, "1001", "1002")
    sender = BuggySender(broken="1001")

    async def failed() -> bool:
        await Delivery(
            engine=engine, senders={Platform.TELEGRAM: sender}, concurrency=4, backoff_base=0.01
        ).drain()
        return (await statuses(engine))[0][0] == "failed"

    await wait_until(failed, what="the broken chat's message failed")
    assert await statuses(engine) == [
        ("failed", f"gave up after {sender.tries} attempts: internal error"),
        ("sent", None),
    ]
    assert sender.chats == ["1002"]
    assert 1 < sender.tries <= 10  # retried with back-off, not spun on
    logged = [r for r in caplog.records if r.getMessage() == "unexpected error while delivering"]
    assert logged and logged[0].exc_info is not None


async def test_records_of_sends_in_flight_share_transactions(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    world = await started(engine, tmp_path)
    chat_ids = [str(3000 + i) for i in range(30)]
    for chat_id in chat_ids:
        await world.chat(chat_id, "rl")
    await world.publish("p/a", tags="[rl]")
    assert await world.plan() == 30
    commits = 0

    def count(_conn: object) -> None:
        nonlocal commits
        commits += 1

    event.listen(engine.sync_engine, "commit", count)
    sender = SleepingSender(latency=0.05)
    try:
        await Delivery(engine=engine, senders={Platform.TELEGRAM: sender}, concurrency=16).drain()
    finally:
        event.remove(engine.sync_engine, "commit", count)
    assert sorted(sender.chats) == chat_ids  # each once
    assert [s for s, _ in await statuses(engine)] == ["sent"] * 30
    assert commits < 15  # a transaction per send would have made 30, and the claims more


class CappedSleepingSender(SleepingSender):
    """A :class:`SleepingSender` under a platform cap, counting the sends under way at once."""

    def __init__(self, latency: float, *, rate: float) -> None:
        super().__init__(latency)
        self.rate_per_second = rate  # type: ignore[assignment]
        self.under_way = 0
        self.most_under_way = 0

    async def send(
        self, chat_id: str, message: Outgoing, *, thread: str | None, attempt: Attempt | None = None
    ) -> str | None:
        self.under_way += 1
        self.most_under_way = max(self.most_under_way, self.under_way)
        try:
            return await super().send(chat_id, message, thread=thread)
        finally:
            self.under_way -= 1


@pytest.mark.parametrize(("ceiling", "expected_at_least"), [(1024, 151), (80, 80)])
async def test_window_follows_cap_times_latency_up_to_its_ceiling(
    engine: AsyncEngine, tmp_path: Path, ceiling: int, expected_at_least: int
) -> None:
    world = await started(engine, tmp_path)
    for i in range(400):
        await world.chat(str(5000 + i), "rl")
    await world.publish("p/a", tags="[rl]")
    assert await world.plan() == 400
    # 500 a second, each send holding its worker at least 0.2 s: at least 100 must be under
    # way at once to keep the cap, 150 with the window's headroom; 16 workers would give 80/s.
    sender = CappedSleepingSender(latency=0.2, rate=500)
    engine_ = Delivery(
        engine=engine, senders={Platform.TELEGRAM: sender}, concurrency=16, max_in_flight=ceiling
    )
    await engine_.drain()
    assert sorted(sender.chats) == sorted(str(5000 + i) for i in range(400))
    assert expected_at_least <= engine_.window <= ceiling
    assert sender.most_under_way <= ceiling


class FirstAnswerSender(CappedSleepingSender):
    """Also notes how many sends were under way when the first of them was answered."""

    def __init__(self, latency: float, *, rate: float) -> None:
        super().__init__(latency, rate=rate)
        self.under_way_at_first_answer: int | None = None

    async def send(
        self, chat_id: str, message: Outgoing, *, thread: str | None, attempt: Attempt | None = None
    ) -> str | None:
        self.under_way += 1
        self.most_under_way = max(self.most_under_way, self.under_way)
        try:
            await asyncio.sleep(self.latency)
            if self.under_way_at_first_answer is None:
                self.under_way_at_first_answer = self.under_way
            self.chats.append(chat_id)
            return None
        finally:
            self.under_way -= 1


async def test_window_and_rows_in_memory_keep_up_before_the_first_answer(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    """Before any send has been answered (nothing measured yet), the window grows as the
    pace lets sends go, and the claimer fetches rows for the grown window at once: the
    cap, not the window's floor or the first claim, decides how many go in the first round
    trip. (With the floor of 16 and claims of 16 rows, 32 at most went before.)"""
    world = await started(engine, tmp_path)
    for i in range(400):
        await world.chat(str(7000 + i), "rl")
    await world.publish("p/a", tags="[rl]")
    assert await world.plan() == 400
    # 500 a second for the 0.5 s before the first answer: about 245 sends under way.
    sender = FirstAnswerSender(latency=0.5, rate=500)
    engine_ = Delivery(
        engine=engine, senders={Platform.TELEGRAM: sender}, concurrency=16, claim_batch=16
    )
    await engine_.drain()
    assert sorted(sender.chats) == sorted(str(7000 + i) for i in range(400))
    assert sender.under_way_at_first_answer is not None
    assert sender.under_way_at_first_answer >= 100


async def test_window_stays_at_its_floor_without_a_platform_cap(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    world = await started(engine, tmp_path)
    for i in range(40):
        await world.chat(str(6000 + i), "rl")
    await world.publish("p/a", tags="[rl]")
    assert await world.plan() == 40
    sender = SleepingSender(latency=0.05)  # no cap: only the per-chat limits pace it
    engine_ = Delivery(engine=engine, senders={Platform.TELEGRAM: sender}, concurrency=8)
    await engine_.drain()
    assert len(sender.chats) == 40
    assert engine_.window == 8
