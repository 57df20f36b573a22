"""``/healthz`` follows progress: when a fan-out stalls because nothing can be recorded (a
full disk; PostgreSQL taking reads and refusing writes), the run says 503 within a few
seconds and keeps saying it, every sample, until the records go through again; then 200,
and every chat gets its message.

The issue's run answered 200 in 5 of 8 samples on a full disk: the claimer, with enough
rows in memory, called the database healthy every second without asking it anything.
"""

from __future__ import annotations

import asyncio
import collections
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.cli import start_cli
from tests.fakes import full_disk
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_admin import subscribers
from tests.integration.test_crash import run_env
from tests.integration.test_ops import wait_healthy
from tests.integration.test_outage_refusals import _base_url
from tests.integration.test_replicas import broadcast
from tests.ports import free_port
from tests.scratch import _admin
from tests.waiting import wait_until

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
CAP = 20
CHATS = 300
# From the stall to the first 503 (the issue: "within a few seconds").
SAY_SO_SECONDS = 5.0
SAMPLE_SECONDS = 8.0


def stalls(database_url: str, pid: int) -> tuple[Callable[[], Awaitable[None]], ...]:
    """How to make the run's records fail while its reads answer, and to undo it."""
    if database_url.startswith("sqlite"):

        async def fill() -> None:
            full_disk.fill(pid)

        async def free() -> None:
            full_disk.free(pid)

        return fill, free
    base, name = _base_url(), make_url(database_url).database
    terminate = (
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        f"WHERE datname = '{name}' AND pid <> pg_backend_pid()"
    )

    async def read_only() -> None:  # as a server that became a standby
        await _admin(base, f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
        await _admin(base, terminate)

    async def writable() -> None:
        await _admin(base, f'ALTER DATABASE "{name}" RESET default_transaction_read_only')
        await _admin(base, terminate)

    return read_only, writable


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_healthz_is_503_while_delivery_is_stalled_and_200_after(
    database_url: str, engine: AsyncEngine, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    if database_url.startswith("sqlite"):
        full_disk.supported()
    (tmp_path / "wiki").mkdir()
    chats = await subscribers(engine, CHATS)
    port = free_port()
    url = f"http://127.0.0.1:{port}/healthz"
    async with FakeTelegram(token=TOKEN) as tg, httpx.AsyncClient(timeout=10) as client:
        tg.latency = 0.05
        env = dict(
            run_env(clean_env, database_url, tmp_path / "wiki", tg),
            TELEGRAM_RATE_PER_SECOND=str(CAP),
            HTTP_PORT=str(port),
        )
        process = start_cli(env=env, cwd=tmp_path, err=tmp_path / "err.log", pipe=True)
        stall, unstall = stalls(database_url, process.pid)

        def delivered() -> list[str]:
            return [c.chat_id for c in tg.calls("sendMessage", ok=True)]

        async def sample() -> int:
            try:
                return (await client.get(url)).status_code
            except httpx.TransportError:
                return 0

        try:
            await wait_healthy(client, url, process)
            assert await broadcast(engine, "Stalled", tag="rl") == CHATS
            await wait_until(lambda: len(delivered()) >= CAP, seconds=60)
            stalled_at = time.monotonic()
            await stall()
            samples: list[tuple[float, int]] = []
            while time.monotonic() - stalled_at < SAMPLE_SECONDS:
                samples.append((time.monotonic() - stalled_at, await sample()))
                await asyncio.sleep(0.25)
            assert len(delivered()) < CHATS, "the fan-out ended before the stall"
            first = next((t for t, status in samples if status == 503), None)
            assert first is not None and first < SAY_SO_SECONDS, samples
            after = [status for t, status in samples if t >= first]
            assert set(after) == {503}, samples  # every sample, not one in two
            await unstall()

            async def ready() -> bool:
                return await sample() == 200

            await wait_until(ready, seconds=30, what="/healthz 200 again")
            await wait_until(lambda: len(set(delivered())) >= CHATS, seconds=120)
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(process.wait, 60)
    per_chat = collections.Counter(delivered())
    assert sorted(int(c) for c in per_chat) == chats
    log = (tmp_path / "err.log").read_text()
    assert process.returncode == 0, log[-3000:]
    assert "Traceback" not in log, log[-3000:]


@pytest.mark.slow
async def test_sends_that_do_not_settle_are_a_stall_whatever_the_reason(
    engine: AsyncEngine,
) -> None:
    """No database error at all: the platform holds every request. Messages are under way
    and none settles, so the engine says deliveries are stalled, and no longer once they
    move."""
    from bot.channels.telegram.client import close_bot, make_bot
    from bot.channels.telegram.sender import TelegramSender
    from bot.delivery.engine import STALL_SECONDS, Delivery
    from bot.models import Platform
    from tests.conftest import Settings

    await subscribers(engine, 5)
    assert await broadcast(engine, "Held", tag="rl") == 5
    async with FakeTelegram(token=TOKEN) as tg:
        tg.latency = STALL_SECONDS + 3
        bot = make_bot(Settings(telegram_bot_token=TOKEN, telegram_api_base_url=tg.base_url))
        delivery = Delivery(
            engine=engine, senders={Platform.TELEGRAM: TelegramSender(bot, rate_per_second=CAP)}
        )
        stop = asyncio.Event()
        task = asyncio.create_task(delivery.run(stop))
        try:
            await asyncio.sleep(1.0)  # a second into the stall: not yet a problem
            assert delivery.problem is None  # under way, not yet stalled
            await wait_until(lambda: delivery.problem is not None, seconds=STALL_SECONDS + 2)
            assert str(delivery.problem).startswith("deliveries stalled:")
            tg.latency = 0.0
            await wait_until(lambda: len(tg.calls("sendMessage", ok=True)) == 5, seconds=30)
            await wait_until(lambda: delivery.problem is None, seconds=10)
        finally:
            stop.set()
            await asyncio.wait_for(task, 30)
            await close_bot(bot)
